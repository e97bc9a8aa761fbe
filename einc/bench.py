"""`einc bench`: named benchmark suites, einc beside its anchors in the same run.

Anchors: numpy.einsum(optimize=False) (numpy's own loops), numpy.einsum(optimize=True)
and opt_einsum.contract (both transpose + BLAS where they can). Medians of wall time;
results are saved as JSON under benchmarks/results/ with the machine and versions.
"""
from __future__ import annotations

import json
import math
import os
import platform
import time
from pathlib import Path

import numpy as np

from .timing import median_time

SUITES = {
    "core": [
        ("matmul 512^3", "ij,jk->ik", [(512, 512), (512, 512)], "float64"),
        ("matmul 2048^3", "ij,jk->ik", [(2048, 2048), (2048, 2048)], "float32"),
        ("batched matmul", "bij,bjk->bik", [(64, 128, 96), (64, 96, 128)], "float32"),
        ("4-operand chain", "ij,jk,kl,lm->im", [(30, 40), (40, 50), (50, 40), (40, 30)], "float64"),
        ("permuted abcd,dbea->ec", "abcd,dbea->ec", [(24, 20, 28, 24), (24, 20, 32, 24)], "float64"),
        ("permuted abc,bda->dc", "abc,bda->dc", [(64, 64, 96), (64, 80, 64)], "float32"),
        ("row-dot ij,ij->i", "ij,ij->i", [(4096, 1024), (4096, 1024)], "float64"),
        ("trace ii->", "ii->", [(4096, 4096)], "float64"),
        ("diagonal ii->i", "ii->i", [(4096, 4096)], "float64"),
        ("outer product i,j->ij", "i,j->ij", [(2048,), (2048,)], "float64"),
        ("column sum ij->j", "ij->j", [(4096, 1024)], "float32"),
        ("hadamard ij,ij->ij", "ij,ij->ij", [(2048, 2048), (2048, 2048)], "float32"),
    ],
}


def tccg24_scaled(mib=8.0, dtype="float32"):
    """TCCG-24 with every extent scaled by one factor so the largest tensor is ~``mib`` MiB."""
    from .bench_cuda import load_tccg24
    cases = []
    for group, case, subs, ext, _, _ in load_tccg24():
        terms = subs.replace("->", ",").split(",")
        item = np.dtype(dtype).itemsize

        def biggest(f):
            return max(np.prod([max(1, round(ext[c] * f)) for c in t]) * item for t in terms)
        lo, hi = 0.0, 1.0
        for _ in range(40):  # bisection on the scale factor
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if biggest(mid) <= mib * 2**20 else (lo, mid)
        shapes = [tuple(max(1, round(ext[c] * lo)) for c in t) for t in terms[:-1]]
        cases.append((f"{group} {case}", subs, shapes, dtype))
    return cases


def _operands(shapes, dtype, rng):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def machine_info() -> dict:
    import llvmlite
    import opt_einsum
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "llvmlite": llvmlite.__version__,
            "opt_einsum": opt_einsum.__version__, "date": time.strftime("%Y-%m-%d %H:%M")}


def run_bench(suite="core", backend="cpu", repeat=5, save=True) -> int:
    import opt_einsum as oe
    import einc

    suites = dict(SUITES, tccg24=None)
    if suite not in suites:
        print(f"unknown suite {suite!r}; have {', '.join(suites)}")
        return 2
    cases = tccg24_scaled() if suite == "tccg24" else SUITES[suite]
    # numpy's unoptimised einsum loops over every label at once: hours on the TCCG terms
    with_noopt = suite != "tccg24"
    rng = np.random.default_rng(0)
    rows = []
    head = f"{'case':<26}{'einc':>10}{'np(opt=F)':>11}{'np(opt=T)':>11}{'opt_einsum':>11}{'vs F':>7}{'vs T':>7}  GFLOP/s"
    print(head)
    for name, subs, shapes, dtype in cases:
        ops = _operands(shapes, dtype, rng)
        got = einc.einsum(subs, *ops)
        ref = np.einsum(subs, *[o.astype(np.float64) for o in ops], optimize=True)
        ok = np.allclose(got, ref, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(ref).max(initial=0))))
        t = {
            "einc": median_time(lambda: einc.einsum(subs, *ops), repeat),
            "numpy_noopt": (median_time(lambda: np.einsum(subs, *ops, optimize=False), repeat, budget=1.0)
                            if with_noopt else float("nan")),
            "numpy_opt": median_time(lambda: np.einsum(subs, *ops, optimize=True), repeat),
            "opt_einsum": median_time(lambda: oe.contract(subs, *ops), repeat),
        }
        plan = einc.api.plan_for(subs, shapes, dtype)
        flops = sum(s.flops for s in plan.steps)
        rows.append({"case": name, "einsum": subs, "shapes": shapes, "dtype": dtype, "ok": bool(ok),
                     "seconds": t, "flops": flops, "strategies": [s.strategy for s in plan.steps]})
        print(f"{name:<26}{t['einc']*1e3:>8.2f}ms{t['numpy_noopt']*1e3:>9.2f}ms{t['numpy_opt']*1e3:>9.2f}ms"
              f"{t['opt_einsum']*1e3:>9.2f}ms{t['numpy_noopt']/t['einc']:>6.2f}x{t['numpy_opt']/t['einc']:>6.2f}x"
              f"  {flops / t['einc'] / 1e9:7.2f}{'' if ok else '  MISMATCH'}")
    gm = lambda k: math.exp(sum(math.log(r["seconds"][k] / r["seconds"]["einc"]) for r in rows) / len(rows))
    summary = {"geomean_speedup_vs_numpy_noopt": gm("numpy_noopt"),
               "geomean_speedup_vs_numpy_opt": gm("numpy_opt"),
               "geomean_speedup_vs_opt_einsum": gm("opt_einsum"),
               "slowest_vs_numpy_noopt": min(r["seconds"]["numpy_noopt"] / r["seconds"]["einc"] for r in rows)}
    print(f"geometric mean speed-up: vs numpy(opt=F) {summary['geomean_speedup_vs_numpy_noopt']:.2f}x, "
          f"vs numpy(opt=T) {summary['geomean_speedup_vs_numpy_opt']:.2f}x, "
          f"vs opt_einsum {summary['geomean_speedup_vs_opt_einsum']:.2f}x; "
          f"slowest case vs numpy(opt=F) {summary['slowest_vs_numpy_noopt']:.2f}x")
    print("(x > 1: einc faster; medians of wall time; np(opt=F) = numpy.einsum(optimize=False))")
    if save:
        out = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{suite}-{backend}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps({"machine": machine_info(), "suite": suite, "backend": backend,
                                    "summary": summary, "rows": rows}, indent=1))
        print(f"saved {path}")
    return 0 if all(r["ok"] for r in rows) else 1
