"""bf16 ap,srqp at a small size with the wgmma grid capped at 2 blocks, checked against torch
(written for session 22's resident-B tile, benchmarks/patches/session22-wgmma-resident-b.diff;
at this size the plan takes the all-loader wgmma128x128 tile).

    compute-sanitizer --tool racecheck python3 scripts/resident_b_case.py
"""
import sys

import torch

import einc
from einc.codegen.cuda import emit_wgmma

emit_wgmma.MAX_GRID = 2
ops = [torch.randn(96, 96, device="cuda").to(torch.bfloat16), torch.randn(5, 6, 30, 96, device="cuda").to(torch.bfloat16)]
p = einc.api.plan_for("ap,srqp->srqa", [(96, 96), (5, 6, 30, 96)], "bfloat16", backend="cuda")
print([s.config for s in p.steps])
got = einc.einsum("ap,srqp->srqa", *ops).float()
ref = torch.einsum("ap,srqp->srqa", *[o.float() for o in ops])
err = float((got - ref).abs().max() / ref.abs().max())
print("max rel err", err)
sys.exit(1 if err > 1e-2 else 0)
