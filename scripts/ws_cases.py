"""A wgmma tile (default the warp-specialised 256x128) on a few einsums, with the
grid capped so each block walks several tiles, checked against torch: for compute-sanitizer.

    compute-sanitizer --tool racecheck python3 scripts/ws_cases.py [TILE]
"""
import sys

import torch

import einc
import einc.api
from einc.codegen.cuda import emit_wgmma

tile = sys.argv[1] if len(sys.argv) > 1 else "wgmma256x128ws"
emit_wgmma.choose_tile = lambda step: tile
emit_wgmma.MAX_GRID = 3
bad = 0
for subs, shapes in [("amji,cbkm->kjicba", [(8, 40, 7, 8), (5, 6, 6, 40)]),
                     ("ik,jk->ij", [(520, 96), (264, 96)]),
                     ("ij,jk->ik", [(300, 400), (400, 136)])]:
    ops = [torch.randn(s, device="cuda").to(torch.float16) for s in shapes]
    got = einc.einsum(subs, *ops, strategy="gett").float()
    ref = torch.einsum(subs, *[o.float() for o in ops])
    err = ((got - ref).abs().max() / ref.abs().max()).item()
    bad += err > 1e-2
    print(f"{tile} {subs} {shapes}: rel err {err:.1e}")
sys.exit(bad)
