"""einc's integer GEMM (int8/int16 operands, int32 sums) against numpy, end to end.

    python benchmarks/gett_int_bench.py [--n 2048] [--repeat 3] [--dtypes int8 int16]

Times ``einc.einsum("ij,jk->ik", a, b, dtype="int32")`` against
``numpy.einsum(..., dtype="int32", optimize=True)`` and against
``a.astype(np.int32) @ b.astype(np.int32)`` (casts included).  numpy has no integer
BLAS: both numpy anchors run its generic integer loops, so they are the baseline a
numpy user has, not a tuned one.  Each figure is the best of --repeat runs (after one
warm-up for einc, which compiles there); operands span the whole dtype range, and all
three results are checked equal.  einc uses all cores (EINC_NUM_THREADS), numpy one.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import einc  # noqa: E402
from einc.execute import num_threads  # noqa: E402
from einc.runtime.cpu import jit  # noqa: E402


def best(fn, repeat):
    """(best seconds, last result) over ``repeat`` calls."""
    t_best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dtypes", nargs="+", default=["int8", "int16"])
    args = ap.parse_args(argv)
    n = args.n
    ops = 2.0 * n ** 3
    print(f"host cpu {jit().cpu}, einc threads {num_threads()}, ij,jk->ik n={n}, dtype=int32, "
          f"best of {args.repeat}")
    print(f"{'operands':8s} {'einc':>16s} {'np.einsum(opt)':>16s} {'astype @':>16s} "
          f"{'vs einsum':>9s} {'vs @':>7s}")
    rng = np.random.default_rng(0)
    for name in args.dtypes:
        dt = np.dtype(name)
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        a = rng.integers(lo, hi + 1, (n, n)).astype(dt)
        b = rng.integers(lo, hi + 1, (n, n)).astype(dt)
        einc.einsum("ij,jk->ik", a, b, dtype="int32")  # compile
        t_e, c_e = best(lambda: einc.einsum("ij,jk->ik", a, b, dtype="int32"), args.repeat)
        t_n, c_n = best(lambda: np.einsum("ij,jk->ik", a, b, dtype="int32", optimize=True), args.repeat)
        t_m, c_m = best(lambda: a.astype(np.int32) @ b.astype(np.int32), args.repeat)
        assert np.array_equal(c_e, c_n) and np.array_equal(c_e, c_m)
        cell = lambda t: f"{t * 1e3:8.1f}ms {ops / t / 1e9:5.1f}"  # noqa: E731
        print(f"{name:8s} {cell(t_e):>16s} {cell(t_n):>16s} {cell(t_m):>16s} "
              f"{t_n / t_e:8.1f}x {t_m / t_e:6.1f}x   (ms, GOP/s)", flush=True)


if __name__ == "__main__":
    main()
