"""compute-sanitizer cases for the TMA rows copy (kernels/copy_tma.cuh): ragged boxes on
every dimension, 1/2/4/8/16-byte elements, a misaligned view (the SIMT twin), checked
exactly against torch's permute copy.

    compute-sanitizer --tool memcheck python3 scripts/copy_tma_sanitize_case.py
"""
import sys

import torch

import einc

cases = [("njmi->mnji", (13, 7, 11, 40), torch.bfloat16), ("njmi->mnji", (96, 84, 84, 96), torch.bfloat16),
         ("abc->bac", (5, 37, 24), torch.float32), ("abc->bac", (9, 33, 16), torch.uint8),
         ("kmln->lkmn", (7, 9, 5, 8), torch.float64), ("abc->bac", (6, 5, 4), torch.complex128)]
bad = 0
for subs, shape, dt in cases:
    x = (torch.randn(shape, device="cuda") * 50).to(dt) if dt != torch.uint8 else \
        torch.randint(0, 255, shape, device="cuda", dtype=dt)
    src, dst = subs.split("->")
    perm = [src.index(c) for c in dst]
    for view in (x, torch.cat([x.flatten(), x.flatten()[:1]])[1:].view(shape)):  # aligned, then 1 element off
        got = einc.einsum(subs, view)
        ok = torch.equal(got, view.permute(perm).contiguous())
        print(subs, tuple(shape), dt, "aligned" if view.data_ptr() % 16 == 0 else "misaligned", "ok" if ok else "WRONG")
        bad += not ok
sys.exit(1 if bad else 0)
