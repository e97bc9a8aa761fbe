"""Does the bench protocol pollute einc's samples? The same TCCG-24 CPU cases three ways.

    python benchmarks/protocol_check.py [--cases 'ccsd_t,intensli abj'] [--pairs 2]

- *old*: the suite's protocol before 2026-12-01: per case median_time(einc), then
  numpy(optimize=True), then opt_einsum, back to back (the next case's einc follows this
  case's opt_einsum block, whose OpenBLAS threads are still spinning);
- *new*: einc.bench_protocol.Bench (a worker process per side, quiesced warm blocks
  interleaved over rounds), as the suite now;
- *alone*: einc in a child process that never calls OpenBLAS: the reference for einc.

Old and new alternate ``--pairs`` times in one process; the child runs once at the end.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

import numpy as np


def cases(select):
    from einc.bench import tccg24_scaled
    keys = [s.strip() for s in select.split(",") if s.strip()]
    return [c for c in tccg24_scaled() if not keys or any(k in c[0] for k in keys)]


def operands(cs):
    from einc.bench_protocol import operands
    return [operands(shapes, dt, seed) for seed, (_, _, shapes, dt) in enumerate(cs)]


def old(cs, ops):
    import opt_einsum as oe
    import einc
    from einc.timing import median_time
    out = {}
    for (name, subs, _, _), x in zip(cs, ops):
        out[name] = {"einc": median_time(lambda: einc.einsum(subs, *x), 5),
                     "numpy_opt": median_time(lambda: np.einsum(subs, *x, optimize=True), 5),
                     "opt_einsum": median_time(lambda: oe.contract(subs, *x), 5)}
    return out


def new(cs, ops):
    from einc.bench_protocol import Bench
    with Bench(["einc", "numpy_opt", "opt_einsum"]) as bench:
        return {name: {k: v["median"] for k, v in bench.time(
            {"subs": subs, "shapes": shapes, "dtype": dt, "seed": seed}).items()}
            for seed, (name, subs, shapes, dt) in enumerate(cs)}


def alone(cs, ops):
    import einc
    from einc.timing import median_time
    return {name: {"einc": median_time(lambda: einc.einsum(subs, *x), 15)} for (name, subs, _, _), x in zip(cs, ops)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cases", default="ccsd_t,intensli abj-bka,ao2mo abrs,ccsd ijk-ilmk,ccsd ij-ikl")
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--alone", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    cs = cases(a.cases)
    ops = operands(cs)
    import einc
    for (_, subs, _, _), x in zip(cs, ops):
        einc.einsum(subs, *x)  # compile
    if a.alone:
        print(json.dumps(alone(cs, ops)))
        return
    from einc.bench_protocol import load_average
    runs = {"old": [], "new": []}
    loads = [load_average()]
    for _ in range(a.pairs):
        runs["old"].append(old(cs, ops))
        runs["new"].append(new(cs, ops))
        loads.append(load_average())
    child = subprocess.run([sys.executable, __file__, "--alone", "--cases", a.cases],
                           capture_output=True, text=True, check=True)
    solo = json.loads(child.stdout.strip().splitlines()[-1])
    loads.append(load_average())
    med = lambda proto, name, k: statistics.median(r[name][k] for r in runs[proto])
    print(f"load average (1 min) during the run: {loads}")
    print(f"{'case':<34}{'alone':>8}{'old einc':>10}{'new einc':>10}{'old oe':>9}{'new oe':>9}"
          f"{'old x':>7}{'new x':>7}")
    for name, *_ in cs:
        oe_o, oe_n = med("old", name, "opt_einsum"), med("new", name, "opt_einsum")
        e_o, e_n = med("old", name, "einc"), med("new", name, "einc")
        print(f"{name:<34}{solo[name]['einc'] * 1e3:>8.3f}{e_o * 1e3:>10.3f}{e_n * 1e3:>10.3f}"
              f"{oe_o * 1e3:>9.3f}{oe_n * 1e3:>9.3f}{oe_o / e_o:>7.2f}{oe_n / e_n:>7.2f}")
    print("(ms, medians over the pairs of each protocol's median; x = opt_einsum / einc)")


if __name__ == "__main__":
    main()
