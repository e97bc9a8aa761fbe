"""`einc bench`: named benchmark suites, einc beside its anchors in the same run.

Anchors: numpy.einsum(optimize=False) (numpy's own loops), numpy.einsum(optimize=True)
and opt_einsum.contract (both transpose + BLAS where they can). Every side runs in its
own worker process, in quiesced, warm blocks interleaved over rounds (the protocol and
why: einc.bench_protocol); medians and mins of wall time. Results are saved as JSON under
benchmarks/results/ with the machine, versions, protocol and load average. The
`bandwidth` suite times memory-bound einsums against numpy.einsum and numpy's copy
bandwidth instead (run_bandwidth).
"""
from __future__ import annotations

import json
import math
import os
import platform
import time
from pathlib import Path

import numpy as np

from .bench_protocol import Bench, load_average, operands
from .progress import Progress

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
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # older numpy: no dict mode
        blas = None
    from .runtime.cpu import jit
    return {"cpu": cpu, "llvm_cpu": jit().cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "blas": blas, "llvmlite": llvmlite.__version__,
            "opt_einsum": opt_einsum.__version__, "date": time.strftime("%Y-%m-%d %H:%M")}


PROTOCOL = ("one worker process per side; per case, rounds of blocks alternating between the "
            "sides (first side rotating); before each block every worker's threads quiesced "
            "(OpenBLAS's spin over), then >= 0.15 s of warm-up calls, then timed samples; a block during which "
            "other processes used > 0.3 cores runs once more, the quieter kept; medians and mins "
            "over all samples; foreign_load = other processes' cores during each side's blocks "
            "(einc/bench_protocol.py)")


def _save(kind, doc, loads):
    out = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    doc = {"machine": machine_info(), **doc, "protocol": PROTOCOL, "load_average_1min": loads}
    path.write_text(json.dumps(doc, indent=1))
    print(f"saved {path}")


def _other(t) -> str:
    """The highest other-process load (cores) during a case's blocks, for the table; a *
    where it is above Bench.FOREIGN_RETRY even in the quietest attempts (contended)."""
    xs = [v.get("foreign") for v in t.values() if v.get("foreign") is not None]
    return f"{max(xs):.2f}{'*' if max(xs) > Bench.FOREIGN_RETRY else ' '}" if xs else "- "


def _contended(row) -> bool:
    return any(x is not None and x > Bench.FOREIGN_RETRY for x in row["foreign_load"].values())


def _mean_foreign(rows) -> float:
    xs = [x for r in rows for x in r["foreign_load"].values() if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def _secs(t: float) -> str:
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


# (name, einsum, shapes, dtype, bytes the contraction moves, note): 32 MiB per operand.
# Bytes: every element read plus every element written; a strided read that lands on its
# own 64-byte line (the trace's diagonal) counts the whole line, since that is what moves.
_MIB32 = 4 << 20  # float64 elements in 32 MiB
BANDWIDTH = [
    ("row-dot ij,ij->i", "ij,ij->i", [(4096, 1024), (4096, 1024)], "float64", 8 * (2 * _MIB32 + 4096), ""),
    ("trace ii->", "ii->", [(2048, 2048)], "float64", 64 * 2048 + 8,
     "2048 strided loads, one 64-byte line (and one 4 KiB page) each"),
    ("trace ii-> fp32", "ii->", [(2896, 2896)], "float32", 64 * 2896 + 4,
     "2896 strided loads, one 64-byte line (and one 4 KiB page) each"),
    ("diagonal ii->i", "ii->i", [(2048, 2048)], "float64", 0,
     "a view in numpy and einc: no data moves, compare call times"),
    ("diagonal ii->i fp32", "ii->i", [(2896, 2896)], "float32", 0, "a view, as above"),
    ("hadamard ij,ij->ij", "ij,ij->ij", [(4096, 1024), (4096, 1024)], "float64", 8 * 3 * _MIB32,
     "includes allocating the 32 MiB result, as numpy's call does"),
]


def run_bandwidth(repeat=21, save=True) -> int:
    """The `bandwidth` suite: memory-bound einsums at 32 MiB per operand against numpy.einsum
    (default arguments) and numpy's copy bandwidth, measured in the same run."""
    import einc
    from . import api

    loads = [load_average()]
    rows = []
    variants = [(c, False) for c in BANDWIDTH] + [(BANDWIDTH[-1], True)]
    with Bench(["einc", "numpy", "copy"], repeat=-(-repeat // 3), budget=4.0) as bench:
        copy = 2 * (32 << 20) / bench.time({"seed": 1, "bytes": 32 << 20}, ["copy"])["copy"]["median"]
        print(f"numpy copy (np.copyto, 32 MiB): {copy / 1e9:.2f} GB/s (bytes read + written / median time)")
        print(f"{'case':<26}{'einc':>10}{'numpy':>10}{'vs numpy':>9}{'einc GB/s':>11}{'of copy':>9}{'other':>7}")
        bar = Progress(len(variants), "einc bench bandwidth")
        for seed, ((name, subs, shapes, dtype, nbytes, note), with_out) in enumerate(variants):
            bar.set_item(name)
            ops = operands(shapes, dtype, seed)
            tol = 1e-12 if dtype == "float64" else 1e-4
            ref = np.einsum(subs, *ops)
            ok = bool(np.allclose(einc.einsum(subs, *ops), ref, rtol=tol, atol=1e3 * tol))
            if with_out:  # the kernel alone: the result's pages are already faulted in
                name, note = name + " out=", "preallocated result: the streaming pass alone"
            t = bench.time({"subs": subs, "shapes": shapes, "dtype": dtype, "seed": seed, "out": with_out},
                           ["einc", "numpy"])
            med = {k: v["median"] for k, v in t.items()}
            bw = nbytes / med["einc"] if nbytes else None
            rows.append({"case": name, "einsum": subs, "shapes": shapes, "dtype": dtype, "ok": ok,
                         "seconds": med, "min_seconds": {k: v["min"] for k, v in t.items()},
                         "samples": {k: v["samples"] for k, v in t.items()}, "bytes": nbytes,
                         "foreign_load": {k: v.get("foreign") for k, v in t.items()},
                         "einc_bytes_per_s": bw, "fraction_of_copy": bw / copy if bw else None, "note": note,
                         "strategies": [s.strategy for s in api.plan_for(subs, shapes, dtype).steps]})
            bw_txt = f"{bw / 1e9:>11.2f}{bw / copy:>8.0%} " if bw else f"{'(view)':>11}{'-':>9}"
            bar.print(f"{name:<26}{_secs(med['einc']):>10}{_secs(med['numpy']):>10}{med['numpy'] / med['einc']:>8.2f}x"
                      f"{bw_txt}{_other(t):>6}{'' if ok else '  MISMATCH'}")
            bar.advance()
        bar.close()
    loads.append(load_average())
    print("(medians of wall time; vs numpy > 1: einc faster; GB/s = bytes read + written / einc's time)")
    print(f"load average (1 min) before / after: {loads[0]} / {loads[1]}; other processes' load during "
          f"the blocks, mean {_mean_foreign(rows):.2f} cores ('other': the case's highest side)")
    for r in rows:
        if r["note"]:
            print(f"  {r['case']}: {r['note']}")
    if save:
        _save("bandwidth-cpu", {"suite": "bandwidth", "backend": "cpu", "copy_bytes_per_s": copy,
                                "rows": rows}, loads)
    return 0 if all(r["ok"] for r in rows) else 1


def run_bench(suite="core", backend="cpu", repeat=5, save=True) -> int:
    import einc

    if suite == "bandwidth":
        return run_bandwidth(max(repeat, 21), save)
    suites = dict(SUITES, tccg24=None, bandwidth=None)
    if suite not in suites:
        print(f"unknown suite {suite!r}; have {', '.join(suites)}")
        return 2
    cases = tccg24_scaled() if suite == "tccg24" else SUITES[suite]
    # numpy's unoptimised einsum loops over every label at once: hours on the TCCG terms
    sides = ["einc", "numpy_noopt", "numpy_opt", "opt_einsum"] if suite != "tccg24" else \
        ["einc", "numpy_opt", "opt_einsum"]
    loads = [load_average()]
    rows = []
    head = (f"{'case':<26}{'einc':>10}{'np(opt=F)':>11}{'np(opt=T)':>11}{'opt_einsum':>11}{'vs F':>7}{'vs T':>7}"
            f"{'vs oe':>7}{'(mins)':>7}  GFLOP/s  other")
    print(head)
    bar = Progress(len(cases), f"einc bench {suite}")
    with Bench(sides, repeat=repeat) as bench:
        for seed, (name, subs, shapes, dtype) in enumerate(cases):
            bar.set_item(name)
            ops = operands(shapes, dtype, seed)
            got = einc.einsum(subs, *ops)
            ref = np.einsum(subs, *[o.astype(np.float64) for o in ops], optimize=True)
            ok = np.allclose(got, ref, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(ref).max(initial=0))))
            del got, ref
            t = bench.time({"subs": subs, "shapes": [list(x) for x in shapes], "dtype": dtype, "seed": seed})
            nan = {"median": float("nan"), "min": float("nan"), "samples": 0, "foreign": None}
            t = {k: t.get(k, nan) for k in ("einc", "numpy_noopt", "numpy_opt", "opt_einsum")}
            med = {k: v["median"] for k, v in t.items()}
            plan = einc.api.plan_for(subs, shapes, dtype)
            flops = sum(s.flops for s in plan.steps)
            rows.append({"case": name, "einsum": subs, "shapes": shapes, "dtype": dtype, "ok": bool(ok),
                         "seconds": med, "min_seconds": {k: v["min"] for k, v in t.items()},
                         "samples": {k: v["samples"] for k, v in t.items()},
                         "foreign_load": {k: v.get("foreign") for k, v in t.items()},
                         "flops": flops, "strategies": [s.strategy for s in plan.steps]})
            bar.print(f"{name:<26}{med['einc']*1e3:>8.2f}ms{med['numpy_noopt']*1e3:>9.2f}ms{med['numpy_opt']*1e3:>9.2f}ms"
                      f"{med['opt_einsum']*1e3:>9.2f}ms{med['numpy_noopt']/med['einc']:>6.2f}x{med['numpy_opt']/med['einc']:>6.2f}x"
                      f"{med['opt_einsum']/med['einc']:>6.2f}x{t['opt_einsum']['min']/t['einc']['min']:>6.2f}x"
                      f"  {flops / med['einc'] / 1e9:7.2f}{_other(t):>7}{'' if ok else '  MISMATCH'}")
            bar.advance()
    bar.close()
    loads.append(load_average())

    def gm(k, key="seconds", only=rows):
        return math.exp(sum(math.log(r[key][k] / r[key]["einc"]) for r in only) / len(only)) if only else float("nan")
    quiet = [r for r in rows if not _contended(r)]
    summary = {"geomean_speedup_vs_numpy_noopt": gm("numpy_noopt"),
               "geomean_speedup_vs_numpy_opt": gm("numpy_opt"),
               "geomean_speedup_vs_opt_einsum": gm("opt_einsum"),
               "geomean_speedup_vs_opt_einsum_of_mins": gm("opt_einsum", "min_seconds"),
               "geomean_speedup_vs_numpy_opt_of_mins": gm("numpy_opt", "min_seconds"),
               "slowest_vs_numpy_noopt": min(r["seconds"]["numpy_noopt"] / r["seconds"]["einc"] for r in rows),
               "mean_foreign_load_cores": _mean_foreign(rows),
               "uncontended_cases": len(quiet),
               "geomean_speedup_vs_opt_einsum_uncontended": gm("opt_einsum", only=quiet),
               "geomean_speedup_vs_numpy_opt_uncontended": gm("numpy_opt", only=quiet)}
    print(f"geometric mean speed-up: vs numpy(opt=F) {summary['geomean_speedup_vs_numpy_noopt']:.2f}x, "
          f"vs numpy(opt=T) {summary['geomean_speedup_vs_numpy_opt']:.2f}x, "
          f"vs opt_einsum {summary['geomean_speedup_vs_opt_einsum']:.2f}x "
          f"(of mins: {summary['geomean_speedup_vs_numpy_opt_of_mins']:.2f}x, "
          f"{summary['geomean_speedup_vs_opt_einsum_of_mins']:.2f}x); "
          f"slowest case vs numpy(opt=F) {summary['slowest_vs_numpy_noopt']:.2f}x")
    print(f"over the {len(quiet)} of {len(rows)} cases measured with other processes under "
          f"{Bench.FOREIGN_RETRY} cores: vs numpy(opt=T) {summary['geomean_speedup_vs_numpy_opt_uncontended']:.2f}x, "
          f"vs opt_einsum {summary['geomean_speedup_vs_opt_einsum_uncontended']:.2f}x (* in 'other': contended)")
    print("(x > 1: einc faster; medians of wall time; np(opt=F) = numpy.einsum(optimize=False); "
          "each side in its own process, quiesced warm blocks interleaved)")
    print(f"load average (1 min) before / after: {loads[0]} / {loads[1]}; other processes' load during "
          f"the blocks, mean {summary['mean_foreign_load_cores']:.2f} cores ('other': the case's highest side)")
    if save:
        _save(f"{suite}-{backend}", {"suite": suite, "backend": backend, "summary": summary, "rows": rows}, loads)
    return 0 if all(r["ok"] for r in rows) else 1


