"""A/B the gett big tiles (SIMT, fp64 tensor cores) on fp32 GEMM-like einsums beside torch.einsum (GPU only).

    python3 scripts/big_tiles.py [TILE ...]      (default: auto simt 64x128x16d; simt: EINC_GETT_DM=0)

Each tile is forced through EINC_GETT_BIG_TILE (emit.big_tile), einc's executables rebuilt,
the result checked against torch.einsum's and timed with CUDA events (median, inputs
rotated past L2); torch.einsum is timed before and after the tiles. Prints ms and x torch.
"""
import os
import sys

import torch

import einc
import einc.api
from einc.bench_cuda import TOLERANCE, _events_median, _rotations, case_geometry

CASES = [
    ("ij,jk->ik", "i=4096,j=4096,k=4096"),
    ("ij,jk->ik", "i=8192,j=8192,k=8192"),
    ("ki,jk->ji", "i=7248,j=7240,k=7248"),
    ("lki,jl->kji", "i=384,j=376,k=376,l=384"),
    ("kli,lj->kji", "i=384,j=384,k=376,l=376"),
    ("lki,kjl->ji", "i=384,j=376,k=376,l=384"),
    ("lik,jkl->ji", "i=384,j=376,k=384,l=384"),
    ("kmli,ljm->kji", "i=96,j=84,k=84,l=84,m=96"),
    ("njmi,mknl->lkji", "i=96,j=84,k=84,l=96,m=84,n=84"),
    ("njmi,kmln->lkji", "i=96,j=84,k=84,l=84,m=84,n=96"),
    ("lnim,kmjn->lkji", "i=96,j=84,k=84,l=84,m=96,n=96"),
]
tiles = sys.argv[1:] or ["auto", "simt", "64x128x16d"]
if os.environ.get("BIG_TILES_CASES"):  # a ;-separated subset of the einsums above
    CASES = [c for c in CASES if c[0] in os.environ["BIG_TILES_CASES"].split(";")]
torch.backends.cuda.matmul.allow_tf32 = False
print(f"{'einsum':<18}{'torch ms':>9}" + "".join(f"{t:>18}" for t in tiles) + f"{'torch ms':>9}")
for subs, sz in CASES:
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    geo = case_geometry(subs, sizes, 4)
    sets = _rotations(torch, lambda: [torch.randn(s, device="cuda") for s in geo["shapes"]], geo["bytes"])
    ref = torch.einsum(subs, *sets[0]).double()
    run = lambda i: torch.einsum(subs, *sets[i % len(sets)])
    t0, _ = _events_median(torch, run, 10, 3)
    row = f"{subs:<18}{t0 * 1e3:>9.3f}"
    for tile in tiles:
        os.environ["EINC_GETT_BIG_TILE"] = "auto" if tile == "simt" else tile  # simt: the rule, DM off
        os.environ["EINC_GETT_DM"] = "0" if tile == "simt" else "1"
        einc.api._EXECUTABLES.clear()
        got = einc.einsum(subs, *sets[0]).double()
        ok = torch.allclose(got, ref, rtol=TOLERANCE["float32"], atol=TOLERANCE["float32"] * float(ref.abs().max()))
        te, _ = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]), 10, 3)
        row += f"{te * 1e3:>9.3f} {t0 / te:5.2f}x" + (" " if ok else "!") + " "
    t1, _ = _events_median(torch, run, 10, 3)
    print(row + f"{t1 * 1e3:>9.3f}", flush=True)
os.environ["EINC_GETT_BIG_TILE"] = "auto"
