"""bf16 TCCG cases the TMA producer and plan.table_copies change, three ways in one run:

    python3 scripts/table_copy_compare.py [DTYPE]

new = the default plan (tabled operands of heavy tensor-core GEMMs copied into GEMM order,
TMA where groups are strided); nocopy = plan.TC_TABLE_COPY_MIN_INTENSITY disabled (TMA
still on); old = no table copies and the cp.async producer (session 9's plans); t128x256 /
t256x128 = the default plan with that warp-specialised tile wherever one is chosen; gm16 /
gm4 = EINC_WGMMA_GROUP_M. CUDA-event medians beside torch.einsum; every result checked
against torch's.
"""
from __future__ import annotations

import os
import sys

import torch

import einc
import einc.api
import einc.plan as plan
from einc.bench_cuda import TOLERANCE, _events_median, _rotations, case_geometry
from einc.codegen.cuda import emit_wgmma

CASES = ["ik,jk->ij:i=8192,j=8192,k=8192", "ki,jk->ji:i=7248,j=7240,k=7248", "lki,jl->kji:i=384,j=376,k=376,l=384",
         "njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84", "njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96",
         "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96"]
WAYS = [("new", True, 500, None, "8"), ("nocopy", True, float("inf"), None, "8"), ("old", False, float("inf"), None, "8"),
        ("t128x256", True, 500, "wgmma128x256ws", "8"), ("t256x128", True, 500, "wgmma256x128ws", "8"),
        ("gm16", True, 500, None, "16"), ("gm4", True, 500, None, "4")]
CHOOSE = emit_wgmma.choose_tile


def main():
    dtype = sys.argv[1] if len(sys.argv) > 1 else "bfloat16"
    tdt = getattr(torch, dtype)
    print(f"{'einsum':<18}{'torch':>8}" + "".join(f"{w[0]:>9}" for w in WAYS) + "  x torch (new)  plan (new)")
    for arg in CASES:
        subs, sz = arg.split(":")
        sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
        geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
        sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
        ref = torch.einsum(subs, *sets[0]).double()
        tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *sets[i % len(sets)]), 10, 3)
        times, bad = [], []
        for name, tma, intensity, ws, gm in WAYS:
            emit_wgmma.TMA, plan.TC_TABLE_COPY_MIN_INTENSITY = tma, intensity
            emit_wgmma.choose_tile = (lambda step, ws=ws: ws if CHOOSE(step).endswith("ws") else CHOOSE(step)) if ws else CHOOSE
            os.environ["EINC_WGMMA_GROUP_M"] = gm
            einc.api._EXECUTABLES.clear()
            got = einc.einsum(subs, *sets[0]).double()
            tol = TOLERANCE[dtype]
            if not torch.allclose(got, ref, rtol=tol, atol=tol * float(ref.abs().max())):
                bad.append(name)
            t, _ = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]), 10, 3)
            times.append(t)
            if name == "new":
                p = einc.api.plan_for(subs, geo["shapes"], dtype, backend="cuda")
                desc = " + ".join(s.text for s in p.steps)
        emit_wgmma.TMA, plan.TC_TABLE_COPY_MIN_INTENSITY, emit_wgmma.choose_tile = True, 500, CHOOSE
        os.environ["EINC_WGMMA_GROUP_M"] = "8"
        print(f"{subs:<18}{tt * 1e3:>8.3f}" + "".join(f"{t * 1e3:>9.3f}" for t in times)
              + f"  {tt / times[0]:>5.2f}  {desc}" + (f"  MISMATCH {bad}" if bad else ""))


if __name__ == "__main__":
    main()
