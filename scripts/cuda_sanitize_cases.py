"""One launch of every CUDA kernel family and dtype on ragged shapes (for compute-sanitizer).

Run on a GPU machine:  bash scripts/sanitize.sh
Exits non-zero if any result disagrees with numpy, so the sanitizer run also checks answers.
"""
import numpy as np

import einc

CASES = [("ij,jk->ik", [(31, 17), (17, 33)], "gett"), ("bij,bjk->bik", [(2, 63, 33), (2, 33, 65)], "gett"),
         ("abcd,dbea->ec", [(5, 6, 7, 3), (3, 6, 9, 5)], "gett"), ("ij,ij->i", [(37, 129), (37, 129)], "reduce"),
         ("ij->j", [(129, 37)], "reduce"), ("ii->", [(33, 33)], "reduce"), ("ij->ji", [(31, 65)], "reduce"),
         ("ij,jk,kl->il", [(7, 9), (9, 11), (11, 5)], "generic"), ("ij,jk->ik", [(31, 0), (0, 33)], "gett")]
DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "complex64", "complex128", "bool"]


def main():
    rng = np.random.default_rng(0)
    bad = 0
    for subs, shapes, strategy in CASES:
        for dt in DTYPES:
            ops = [(rng.standard_normal(s) * 3).astype(dt) for s in shapes]
            got = einc.einsum(subs, *ops, backend="cuda", strategy=strategy)
            if np.dtype(dt).kind in "biu":
                good = np.array_equal(got, np.einsum(subs, *ops, optimize=True))
            else:  # a float64/complex128 reference: numpy's own float16 einsum rounds more than einc
                wide = np.complex128 if np.dtype(dt).kind == "c" else np.float64
                ref = np.einsum(subs, *[o.astype(wide) for o in ops], optimize=True)
                good = np.allclose(got.astype(wide), ref, rtol=1e-2, atol=1e-2)
            bad += not good
            if not good:
                print("MISMATCH", subs, dt, strategy)
    print(f"{len(CASES) * len(DTYPES)} launches, {bad} mismatches")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
