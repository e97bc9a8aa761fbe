"""The gett kernel's vector runs on the GPU against numpy -- K-fast (both/one operand, 64x64
and 128x128 tiles, tabled K with runs crossing a mode, ragged K, rows misaligned at run time) and
M/N-fast (ragged edges, tabled M whose runs cross a jump); --torch adds
operands one element off a 16-byte boundary (the element-load fallback). Exit 1 on a mismatch.

    python3 scripts/gett_kvec_cases.py [--torch]    (a GPU machine; also under compute-sanitizer)
"""
import sys
import numpy as np
import einc
CASES = [("ik,jk->ij", [(33, 24), (65, 24)]), ("ik,jk->ij", [(1600, 20), (1700, 20)]),
         ("lik,jlk->ji", [(3, 5, 6), (7, 3, 6)]), ("lik,jkl->ji", [(6, 40, 8), (33, 8, 6)]),
         ("ij,jk->ik", [(1500, 70), (70, 1500)]), ("ap,srqp->srqa", [(96, 40), (8, 7, 6, 40)]),
         ("ji,jk->ik", [(70, 1500), (70, 1301)]), ("kaxb,kxcd->abcd", [(9, 30, 2, 37), (9, 2, 20, 41)])]
rng, bad, n = np.random.default_rng(0), 0, 0
for subs, shapes in CASES:
    for dt in ("float32", "float64", "int32"):
        ops = [(rng.standard_normal(s) * 3).astype(dt) for s in shapes]
        got = einc.einsum(subs, *ops, backend="cuda", strategy="gett")
        ref = np.einsum(subs, *[o.astype(np.float64) for o in ops])
        ok = np.allclose(got.astype(np.float64), ref, rtol=1e-4, atol=1e-3 * np.abs(ref).max())
        n += 1
        bad += not ok
        if not ok:
            print("MISMATCH", subs, shapes, dt)
if "--torch" in sys.argv:
    import torch
    for subs, shapes in CASES[:2] + CASES[3:5] + CASES[6:]:
        ops = []
        for s in shapes:
            flat = torch.randn(int(np.prod(s)) + 1, device="cuda")
            ops.append(flat[1:].view(*s))
        got = einc.einsum(subs, *ops).double().cpu().numpy()
        ref = np.einsum(subs, *[o.double().cpu().numpy() for o in ops])
        ok = np.allclose(got, ref, rtol=1e-4, atol=1e-3 * np.abs(ref).max())
        n += 1
        bad += not ok
        if not ok:
            print("MISMATCH misaligned", subs, shapes)
print(f"{n} einsums, {bad} mismatches")
sys.exit(1 if bad else 0)
