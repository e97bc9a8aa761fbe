"""`einc demo`: representative contractions, checked against numpy, timed beside it."""
from __future__ import annotations

import numpy as np

from .timing import median_time

CASES = [
    ("matrix multiply", "ij,jk->ik", [(256, 256), (256, 256)], "float64"),
    ("batched attention scores", "bhqd,bhkd->bhqk", [(4, 8, 64, 32), (4, 8, 64, 32)], "float32"),
    ("tensor contraction", "abcd,dbea->ec", [(24, 20, 16, 24), (24, 20, 12, 24)], "float64"),
    ("4-operand chain", "ij,jk,kl,lm->im", [(64, 96), (96, 128), (128, 96), (96, 64)], "float64"),
    ("row-wise dot", "ij,ij->i", [(2000, 256), (2000, 256)], "float64"),
    ("trace", "ii->", [(1024, 1024)], "float64"),
    ("named axes", "batch row k, batch k col -> batch row col", [(8, 64, 32), (8, 32, 48)], "float32"),
    ("int8 matmul (int8 wraps like numpy)", "ij,jk->ik", [(128, 64), (64, 128)], "int8"),
    ("complex outer product", "i,j->ij", [(300,), (400,)], "complex128"),
]


def run_demo() -> int:
    import einc

    rng = np.random.default_rng(0)
    print(f"{'case':<38}{'einsum':<44}{'einc':>10}{'numpy':>10}  check")
    failures = 0
    for name, subs, shapes, dtype in CASES:
        dt = np.dtype(dtype)
        if dt.kind in "iu":
            ops = [rng.integers(-4, 5, s).astype(dt) for s in shapes]
        elif dt.kind == "c":
            ops = [(rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(dt) for s in shapes]
        else:
            ops = [rng.standard_normal(s).astype(dt) for s in shapes]
        np_subs = subs if " " not in subs.split(",")[0].strip() else "brk,bkc->brc"
        got = einc.einsum(subs, *ops)
        ref = np.einsum(np_subs, *ops, optimize=True)
        ok = np.array_equal(got, ref) if dt.kind in "iu" else np.allclose(got, ref, rtol=1e-4, atol=1e-4)
        failures += not ok
        t_einc = median_time(lambda: einc.einsum(subs, *ops))
        t_np = median_time(lambda: np.einsum(np_subs, *ops, optimize=True))
        print(f"{name:<38}{subs:<44}{t_einc*1e3:>8.3f}ms{t_np*1e3:>8.3f}ms  {'ok' if ok else 'MISMATCH'}")
    print("numpy = numpy.einsum(optimize=True), medians; every einc result checked against numpy.")
    return 1 if failures else 0
