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
# tensor-core kernels (wgmma on sm_90, mma.sync and the element-path twins) need >= 2^21
# multiply-adds: ragged, both B layouts, a K-major copy, a misaligned operand (the twin)
TC_CASES = [("ij,jk->ik", [(257, 136), (136, 72)]), ("ik,jk->ij", [(260, 96), (100, 96)]),
            ("ki,kj->ij", [(96, 250), (96, 120)]), ("abk,kcd->abcd", [(16, 17, 128), (128, 8, 9)])]
TC_DTYPES = ["float16", "bfloat16", "int8", "tf32"]
# the skinny kernel (a small N or M group against >= 4096 rows): staged C, K-fast A, a rest
# table with ragged tiles, the small group on the M side
SKINNY_CASES = [("akb,jk->jba", [(70, 9, 65), (24, 9)]), ("abk,kj->bja", [(70, 65, 19), (19, 20)]),
                ("akbc,jk->cjba", [(9, 5, 20, 33), (24, 5)]), ("jk,akb->jba", [(24, 9), (70, 9, 65)])]
SKINNY_CASES += [("ik,kj->ij", [(9000, 13), (13, 24)]), ("ki,kj->ij", [(13, 5000), (13, 20)])]  # C N-fast: staged rows
SKINNY_DTYPES = ["float32", "float64", "float16", "int8", "int64"]
# the permute kernel (copies of many short modes: tiles of whole modes, a long mode cut, a
# grown tile) and a big sum of two orders (aligned by a permute copy, then split)
_L = "abcdefghijklmnopqrst"
PERMUTE_CASES = [("abcdefghij->jihgfedcba", [(2,) * 10]), ("abcdef->faebdc", [(2,) * 5 + (64,)]),
                 ("abcdefghijkl->lkjihgfedcba", [(3,) + (2,) * 10 + (5,)]),
                 (f"{_L},{_L[::-1]}->", [(2,) * 20, (2,) * 20])]
PERMUTE_DTYPES = ["float32", "float64", "complex64", "int8"]


def tensor_core_case(rng, subs, shapes, dt, misaligned) -> bool:
    import torch
    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16, "int8": torch.int8, "tf32": torch.float32}[dt]
    ops = []
    for s in shapes:
        n = int(np.prod(s))
        flat = torch.randint(-4, 4, (n + 1,), device="cuda").to(tdt)
        ops.append((flat[1:] if misaligned else flat[:n]).view(*s))
    kw = {"precision": "tf32"} if dt == "tf32" else {"dtype": "int32"} if dt == "int8" else {}
    got = einc.einsum(subs, *ops, **kw).double().cpu().numpy()
    ref = np.einsum(subs, *[o.double().cpu().numpy() for o in ops])
    good = np.allclose(got, ref, rtol=1e-2, atol=1e-2)  # small integers: exact but for bf16 rounding
    if not good:
        print("MISMATCH", subs, dt, "misaligned" if misaligned else "")
    return good


def main():
    import os
    if os.environ.get("EINC_SANITIZE_ONLY") == "new":  # this session's kernels alone (a short device call)
        global CASES, SKINNY_CASES, TC_CASES
        CASES, SKINNY_CASES, TC_CASES = [], SKINNY_CASES[-2:], []
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
    runs = len(CASES) * len(DTYPES)
    for subs, shapes in SKINNY_CASES:
        for dt in SKINNY_DTYPES:
            ops = [(rng.standard_normal(s) * 3).astype(dt) for s in shapes]
            got = einc.einsum(subs, *ops, backend="cuda")
            ref = np.einsum(subs, *[o.astype(np.float64) for o in ops], optimize=True)
            good = (np.array_equal(got, np.einsum(subs, *ops, optimize=True)) if np.dtype(dt).kind in "iu"
                    else np.allclose(got.astype(np.float64), ref, rtol=1e-2, atol=1e-2))
            bad += not good
            runs += 1
            if not good:
                print("MISMATCH", subs, dt, "skinny")
    for subs, shapes in PERMUTE_CASES:
        for dt in PERMUTE_DTYPES:
            ops = [(rng.standard_normal(s) * 3).astype(dt) for s in shapes]
            want = np.einsum(subs, *ops)
            out = np.empty(want.shape, dt)  # (a relabelling would otherwise be a view: no kernel)
            got = einc.einsum(subs, *ops, backend="cuda", out=out)
            wide = np.complex128 if np.dtype(dt).kind == "c" else np.float64
            good = (np.array_equal(got, want) if np.dtype(dt).kind in "iu"
                    else np.allclose(np.asarray(got).astype(wide), np.einsum(subs, *[o.astype(wide) for o in ops]),
                                     rtol=1e-3, atol=1e-2))
            bad += not good
            runs += 1
            if not good:
                print("MISMATCH", subs, dt, "permute")
    for subs, shapes in TC_CASES:
        for dt in TC_DTYPES:
            for misaligned in (False, True):
                bad += not tensor_core_case(rng, subs, shapes, dt, misaligned)
                runs += 1
    print(f"{runs} einsums, {bad} mismatches")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
