"""`einc bench`: named benchmark suites, einc beside its anchors in the same run.

Anchors: numpy.einsum(optimize=False) (numpy's own loops), numpy.einsum(optimize=True)
and opt_einsum.contract (both transpose + BLAS where they can). Medians of wall time;
results are saved as JSON under benchmarks/results/ with the machine and versions.
The `bandwidth` suite times memory-bound einsums against numpy.einsum and numpy's copy
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

from .progress import Progress
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


# (name, einsum, shapes, bytes the contraction moves, note): float64, 32 MiB per operand.
# Bytes: every element read plus every element written; a strided read that lands on its
# own 64-byte line (the trace's diagonal) counts the whole line, since that is what moves.
_MIB32 = 4 << 20  # float64 elements in 32 MiB
BANDWIDTH = [
    ("row-dot ij,ij->i", "ij,ij->i", [(4096, 1024), (4096, 1024)], 8 * (2 * _MIB32 + 4096), ""),
    ("trace ii->", "ii->", [(2048, 2048)], 64 * 2048 + 8,
     "latency-bound: 2048 strided loads, one 64-byte line each"),
    ("diagonal ii->i", "ii->i", [(2048, 2048)], 0,
     "a view in numpy and einc: no data moves, compare call times"),
    ("hadamard ij,ij->ij", "ij,ij->ij", [(4096, 1024), (4096, 1024)], 8 * 3 * _MIB32,
     "includes the fresh 32 MiB result (the kernel zeroes its pages), as numpy's call does"),
]


def copy_bandwidth(nbytes=32 << 20, repeat=21) -> float:
    """numpy's copy bandwidth in bytes/s: ``np.copyto`` of ``nbytes`` (read + written) / median time."""
    src = np.random.default_rng(1).standard_normal(nbytes // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # fault the destination's pages in before timing
    return 2 * src.nbytes / median_time(lambda: np.copyto(dst, src), repeat, budget=5.0)


def _interleaved(fns: dict, repeat: int, budget=10.0) -> dict:
    """Median seconds per call of each function, samples alternating (a busy shared
    machine's drift then hits einc and its anchor alike). A sample is one call, or as many
    as fill ~2 ms for calls of microseconds."""
    import statistics
    samples, number = {k: [] for k in fns}, {}
    for k, f in fns.items():
        f()  # warm-up
        t0 = time.perf_counter()
        f()
        number[k] = max(1, int(2e-3 / max(time.perf_counter() - t0, 1e-7)))
    start = time.perf_counter()
    while min(map(len, samples.values())) < repeat and time.perf_counter() - start < budget:
        for k, f in fns.items():
            n = number[k]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            samples[k].append((time.perf_counter() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def _secs(t: float) -> str:
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


def run_bandwidth(repeat=21, save=True) -> int:
    """The `bandwidth` suite: memory-bound einsums at 32 MiB per operand against numpy.einsum
    (default arguments) and numpy's copy bandwidth, measured in the same run."""
    import einc
    from . import api

    rng = np.random.default_rng(0)
    copy_bw = copy_bandwidth(repeat=repeat)
    print(f"numpy copy (np.copyto, 32 MiB): {copy_bw / 1e9:.2f} GB/s (bytes read + written / median time)")
    print(f"{'case':<24}{'einc':>10}{'numpy':>10}{'vs numpy':>9}{'einc GB/s':>11}{'of copy':>9}")
    rows = []
    variants = [(c, False) for c in BANDWIDTH] + [(BANDWIDTH[3], True)]
    bar = Progress(len(variants), "einc bench bandwidth")
    for (name, subs, shapes, nbytes, note), with_out in variants:
        bar.set_item(name)
        ops = _operands(shapes, "float64", rng)
        got = einc.einsum(subs, *ops)
        ref = np.einsum(subs, *ops)
        ok = bool(np.allclose(got, ref, rtol=1e-12, atol=1e-9))
        if with_out:  # the kernel alone: the result's pages are already faulted in
            name, note = name + " out=", "preallocated result: the streaming pass alone"
            out = np.empty_like(ref)
            out.fill(0)
            f_einc = lambda: einc.einsum(subs, *ops, out=out)
            f_np = lambda: np.einsum(subs, *ops, out=out)
        else:
            f_einc = lambda: einc.einsum(subs, *ops)
            f_np = lambda: np.einsum(subs, *ops)
        t = _interleaved({"einc": f_einc, "numpy": f_np}, repeat)
        bw = nbytes / t["einc"] if nbytes else None
        rows.append({"case": name, "einsum": subs, "shapes": shapes, "dtype": "float64", "ok": ok,
                     "seconds": t, "bytes": nbytes, "einc_bytes_per_s": bw,
                     "fraction_of_copy": bw / copy_bw if bw else None, "note": note,
                     "strategies": [s.strategy for s in api.plan_for(subs, shapes, "float64").steps]})
        bw_txt = f"{bw / 1e9:>11.2f}{bw / copy_bw:>8.0%} " if bw else f"{'(view)':>11}{'-':>9}"
        bar.print(f"{name:<24}{_secs(t['einc']):>10}{_secs(t['numpy']):>10}{t['numpy'] / t['einc']:>8.2f}x"
                  f"{bw_txt}{'' if ok else '  MISMATCH'}")
        bar.advance()
    bar.close()
    print("(medians of wall time; vs numpy > 1: einc faster; GB/s = bytes read + written / einc's time)")
    for r in rows:
        if r["note"]:
            print(f"  {r['case']}: {r['note']}")
    if save:
        out_dir = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"bandwidth-cpu-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps({"machine": machine_info(), "suite": "bandwidth", "backend": "cpu",
                                    "copy_bytes_per_s": copy_bw, "rows": rows}, indent=1))
        print(f"saved {path}")
    return 0 if all(r["ok"] for r in rows) else 1


def run_bench(suite="core", backend="cpu", repeat=5, save=True) -> int:
    import opt_einsum as oe
    import einc

    if suite == "bandwidth":
        return run_bandwidth(max(repeat, 21), save)
    suites = dict(SUITES, tccg24=None, bandwidth=None)
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
    bar = Progress(len(cases), f"einc bench {suite}")
    for name, subs, shapes, dtype in cases:
        bar.set_item(name)
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
        bar.print(f"{name:<26}{t['einc']*1e3:>8.2f}ms{t['numpy_noopt']*1e3:>9.2f}ms{t['numpy_opt']*1e3:>9.2f}ms"
                  f"{t['opt_einsum']*1e3:>9.2f}ms{t['numpy_noopt']/t['einc']:>6.2f}x{t['numpy_opt']/t['einc']:>6.2f}x"
                  f"  {flops / t['einc'] / 1e9:7.2f}{'' if ok else '  MISMATCH'}")
        bar.advance()
    bar.close()
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
