"""compute-sanitizer cases for stream_mma's C-by-boxes epilogue (cbox.py): ccsd_t's layouts
at a small j and k and a batch, three blocks walking every tile, checked against torch.

    compute-sanitizer --tool racecheck python3 scripts/box_sanitize_case.py
"""
import os
import sys

import torch

os.environ["EINC_STREAM"] = "1"
import einc  # noqa: E402
from einc.codegen.cuda import emit_stream  # noqa: E402

import einc.codegen.cuda.emit as cuda_emit  # noqa: E402
cuda_emit.SM_COUNT = 3  # the SM count grids are sized for
sizes = dict(a=24, b=20, c=20, i=24, j=2, k=3, m=24, z=2)
bad = 0
for subs in ["bmji,cakm->kjicba", "amji,cbkm->kjicba", "bmki,cajm->kjicba", "zbmji,zcakm->zkjicba"]:
    shapes = [tuple(sizes[l] for l in t) for t in subs.split("->")[0].split(",")]
    ops = [torch.randn(s, device="cuda").to(torch.bfloat16) for s in shapes]
    got = einc.einsum(subs, *ops).float()
    ref = torch.einsum(subs, *[o.float() for o in ops])
    err = float((got - ref).abs().max() / ref.abs().max())
    print(subs, "max rel err", err)
    bad += err > 1e-2
sys.exit(1 if bad else 0)
