"""Run one einsum a few times on the GPU through einc, for ncu / nsys:

    python3 scripts/one_einsum.py 'EXPR:a=384,b=384,...' [dtype]
"""
import sys

import torch

import einc

subs, sz = sys.argv[1].split(":")
dt = getattr(torch, sys.argv[2] if len(sys.argv) > 2 else "float32")
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
ops = [torch.randn(*[sizes[l] for l in t], device="cuda").to(dt) for t in subs.split("->")[0].split(",")]
for _ in range(3):
    einc.einsum(subs, *ops)
torch.cuda.synchronize()
