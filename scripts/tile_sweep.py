"""Time one einsum at every forced kernel tile beside torch.einsum (GPU only):

    python3 scripts/tile_sweep.py DTYPE 'EXPR:a=..,b=..' [TILE ...]

TILE: a SIMT gett tile (emit.GETT_TILES), a wgmma tile (emit_wgmma.WGMMA_TILES) or an
mma.sync tile (emit_mma.MMA_TILES, with wgmma off);
"default" is the plan's own choice. Inputs rotate past L2 like the suites'.
"""
import sys

import torch

import einc
import einc.api
from einc.bench_cuda import TOLERANCE, _events_median, _rotations, case_geometry
from einc.codegen.cuda import emit, emit_mma, emit_wgmma

dtype, arg, *tiles = sys.argv[1:]
tdt = getattr(torch, dtype)
torch.backends.cuda.matmul.allow_tf32 = False
subs, sz = arg.split(":")
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
ref = torch.einsum(subs, *sets[0])
tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *sets[i % len(sets)]), 10, 3)
f = geo["flops"]
print(f"{dtype} {subs} {sz}: torch.einsum {tt * 1e3:.3f} ms {f / tt / 1e12:.2f} TFLOP/s")
orig_gett, orig_choose, orig_mma = emit._emit_gett, emit_wgmma.choose_tile, emit_mma.choose_tile
for tile in tiles or ["default"]:
    emit._emit_gett, emit_wgmma.choose_tile, emit_mma.choose_tile = orig_gett, orig_choose, orig_mma
    emit_wgmma.ENABLED = True
    if tile in emit.GETT_TILES:
        emit._emit_gett = lambda step, d, c, t=None, tile=tile: orig_gett(step, d, c, tile)
    elif tile in emit_wgmma.WGMMA_TILES:
        emit_wgmma.choose_tile = lambda step, tile=tile: tile
    elif tile in emit_mma.MMA_TILES:
        emit_wgmma.ENABLED = False
        emit_mma.choose_tile = lambda step, tile=tile: tile
    einc.api._EXECUTABLES.clear()
    got = einc.einsum(subs, *sets[0])
    ok = torch.allclose(got.double(), ref.double(), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * float(ref.abs().max()))
    te, _ = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]), 10, 3)
    print(f"  {tile:<16} {te * 1e3:8.3f} ms {f / te / 1e12:7.2f} TFLOP/s {tt / te:5.2f}x{'' if ok else '  MISMATCH'}")
emit._emit_gett, emit_wgmma.choose_tile, emit_mma.choose_tile = orig_gett, orig_choose, orig_mma
