"""Run one TCCG-24 case a few times on the GPU, for ncu or nsys:

    python3 scripts/one_case.py CASE [dtype]      (CASE as in the suite, e.g. abcijk-ijma-mkbc)
"""
import sys

import torch

import einc
from einc.bench_cuda import load_tccg24

name = sys.argv[1]
dt = getattr(torch, sys.argv[2] if len(sys.argv) > 2 else "bfloat16")
group, case, expr, sizes, *_ = next(c for c in load_tccg24() if c[1] == name)
ops = [torch.randn(*[sizes[l] for l in s], device="cuda").to(dt) for s in expr.split("->")[0].split(",")]
for _ in range(3):
    einc.einsum(expr, *ops)
torch.cuda.synchronize()
print(group, case, expr, sizes)
