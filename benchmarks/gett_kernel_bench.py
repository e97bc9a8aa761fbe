"""Single-thread GFLOP/s of einc's packed GETT kernel against numpy.matmul (OpenBLAS).

    OPENBLAS_NUM_THREADS=1 python benchmarks/gett_kernel_bench.py [--sizes 512 2048]

The kernel is called directly through the JIT on row-major square matrices (the
offset tables are built once, outside the timing).  Each measurement is the best of
several runs, einc and numpy interleaved so both see the same machine load.
Set OPENBLAS_NUM_THREADS=1 for a fair single-core comparison (this script sets it
when unset, before numpy loads).  Where OPENBLAS_CORETYPE is set for the machine,
OpenBLAS may run a slower generic kernel; the script prints it when set.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from einc.codegen.llvm.gett import emit_gett, gett_params, gett_workspace_elems  # noqa: E402
from einc.runtime.cpu import jit  # noqa: E402

P = ctypes.c_void_p
_FN = ctypes.CFUNCTYPE(None, P, P, P, P, P, P, ctypes.c_int64, ctypes.c_int64)


def make_call(dtype, bits, A, B, C):
    """A no-argument callable computing C = A @ B with the GETT kernel."""
    addr = jit().get(("gett-bench", np.dtype(dtype).str, bits), lambda: emit_gett(dtype, bits))
    f = _FN(addr)
    (M, K), N = A.shape, B.shape[1]
    tab = np.concatenate([np.zeros(3, np.int64),
                          np.arange(M) * K, np.arange(M) * N,  # mA, mC
                          np.arange(N), np.arange(N),  # nB, nC
                          np.arange(K), np.arange(K) * N]).astype(np.int64)  # kA, kB
    dims = np.array([1, M, N, K], np.int64)
    es = np.dtype(dtype).itemsize
    raw = np.empty(gett_workspace_elems(dtype, bits) + 64, dtype)
    work = raw[(-raw.ctypes.data % 64) // es:]
    args = (C.ctypes.data, A.ctypes.data, B.ctypes.data, dims.ctypes.data,
            tab.ctypes.data, work.ctypes.data, 0, N)
    keep = (tab, dims, raw)  # noqa: F841 - alive as long as the closure

    def call():
        _ = keep
        f(*args)
    return call


def best_gflops(fns, flops, min_time):
    """Best GFLOP/s of each callable, run interleaved until each had min_time seconds."""
    best = [0.0] * len(fns)
    spent = [0.0] * len(fns)
    rounds = 0
    while rounds < 3 or min(spent) < min_time:
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            dt = time.perf_counter() - t
            spent[i] += dt
            best[i] = max(best[i], flops / dt / 1e9)
        rounds += 1
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 2048])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--bits", type=int, default=None, help="vector width (default: host)")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per measurement")
    args = ap.parse_args(argv)
    bits = args.bits or jit().host_vector_bits()
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
          + (f" OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}"
             if "OPENBLAS_CORETYPE" in os.environ else "")
          + f"  host cpu {jit().cpu}, vector bits {bits}")
    print(f"{'dtype':8s} {'n':>6s} {'einc':>9s} {'numpy':>9s} {'ratio':>7s}   tiles")
    rng = np.random.default_rng(0)
    for dtname in args.dtypes:
        dtype = np.dtype(dtname)
        p = gett_params(dtype, bits)
        for n in args.sizes:
            A = rng.standard_normal((n, n)).astype(dtype)
            B = rng.standard_normal((n, n)).astype(dtype)
            C = np.empty((n, n), dtype)
            C2 = np.empty((n, n), dtype)
            ours = make_call(dtype, bits, A, B, C)
            ours()
            ref = A.astype(np.float64) @ B.astype(np.float64)
            err = np.abs(C - ref).max() / max(1.0, np.abs(ref).max())
            assert err < (1e-4 if dtype == np.float32 else 1e-12), err
            g_ours, g_np = best_gflops([ours, lambda: np.matmul(A, B, out=C2)],
                                       2.0 * n ** 3, args.min_time)
            print(f"{dtname:8s} {n:6d} {g_ours:9.1f} {g_np:9.1f} {g_ours / g_np:7.2f}"
                  f"   MR={p.MR} NR={p.NR} MC={p.MC} KC={p.KC} NC={p.NC}", flush=True)


if __name__ == "__main__":
    main()
