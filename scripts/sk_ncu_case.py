"""One einsum, run three times (for ncu: `--launch-skip 1 --launch-count 1` on its wgmma kernel).

    ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 python3 scripts/sk_ncu_case.py 'EXPR:a=..' bfloat16

A third argument "torch" runs torch.einsum instead (its cuBLAS kernel, for the same counters).
"""
import sys

import torch

import einc
from einc.bench_cuda import case_geometry

subs, sz = sys.argv[1].split(":")
dtype = getattr(torch, sys.argv[2] if len(sys.argv) > 2 else "bfloat16")
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
ops = [torch.randn(s, device="cuda").to(dtype) for s in case_geometry(subs, sizes, 2)["shapes"]]
for _ in range(3):
    out = torch.einsum(subs, *ops) if sys.argv[3:] == ["torch"] else einc.einsum(subs, *ops)
torch.cuda.synchronize()
print(subs, "ok", float(out.float().abs().mean()))
