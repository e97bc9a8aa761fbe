"""Time einsums whose output interleaves the two operands' free labels, writing C row-major
(the default) against writing it in either GEMM order (an out= view of a permuted buffer),
torch.einsum beside them (CUDA events, medians, inputs rotated past L2).

    python3 scripts/layout_ab.py DTYPE 'EXPR:a=..,b=..' ...
"""
import sys

import torch

import einc
from einc.bench_cuda import TOLERANCE, _events_median, _rotations, case_geometry

args = sys.argv[1:]
dtype = args.pop(0)
tdt = getattr(torch, dtype)
torch.backends.cuda.matmul.allow_tf32 = False
for arg in args:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    ins, out = subs.split("->")
    a, b = ins.split(",")
    ga = "".join(c for c in out if c in a and c not in b)
    gb = "".join(c for c in out if c in b and c not in a)
    bt = "".join(c for c in out if c in a and c in b)
    geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
    sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
    ref = torch.einsum(subs, *sets[0])
    tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *sets[i % len(sets)]), 10, 3)
    row = [f"{subs:<22}", f"torch {tt * 1e6:7.1f}"]
    for perm in (out, bt + ga + gb, bt + gb + ga):
        buf = torch.empty([sizes[c] for c in perm], dtype=tdt, device="cuda")
        o = buf.permute([perm.index(c) for c in out])
        if perm == out:  # (a case whose output is already in GEMM order repeats this row)
            fn = lambda i: einc.einsum(subs, *sets[i % len(sets)])
        else:
            fn = lambda i, o=o: einc.einsum(subs, *sets[i % len(sets)], out=o)
        got = fn(0)
        ok = torch.allclose(got.double(), ref.double(), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * float(ref.abs().max()))
        te, _ = _events_median(torch, fn, 10, 3)
        row.append(f"{perm} {te * 1e6:7.1f} ({tt / te:4.2f}x){'' if ok else ' MISMATCH'}")
    print("  ".join(row), flush=True)
