"""Why does a step's default kernel time differently from the same tile forced? (GPU only)

    python3 scripts/default_vs_forced.py DTYPE 'EXPR:a=..' TILE

Builds the executable both ways, prints each one's kernels (name, grid, block, smem) and
path counters, then times them alternated (CUDA events, medians, inputs rotated past L2).
"""
import sys

import torch

import einc
import einc.api
from einc.bench_cuda import _events_median, _rotations, case_geometry
from einc.codegen.cuda import emit_wgmma

dtype, arg, tile = sys.argv[1:4]
tdt = getattr(torch, dtype)
subs, sz = arg.split(":")
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
orig = emit_wgmma.choose_tile


for forced in (False, True, False, True):
    emit_wgmma.choose_tile = (lambda step: tile) if forced else orig
    einc.api._EXECUTABLES.clear()
    einc.einsum(subs, *sets[0])
    exs = list(einc.api._EXECUTABLES.data.values())
    t, _ = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]), 10, 3)
    desc = []
    for ex in exs:
        for k in getattr(ex, "kernels", []):
            desc.append(f"{k.name} grid={k.grid} block={k.block} smem={k.smem} tmaps={len(k.tmaps)}")
        desc.append(f"calls={getattr(ex, 'calls', '?')} graphs={getattr(ex, 'graph_launches', '?')}")
    print(f"{'forced' if forced else 'default'} {t * 1e3:.3f} ms | " + " | ".join(desc))
emit_wgmma.choose_tile = orig
