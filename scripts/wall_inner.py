"""Wall time per call against calls per CUDA-event sample (1, 2, 10), einc beside torch.einsum:
a call whose host time exceeds its kernel shows it at 1-2 calls per sample, as the TCCG-24 suite
times (2 calls a sample).

    python3 scripts/wall_inner.py [dtype] 'EXPR:a=96,p=96,...' ...
"""
import sys
import time

import torch

import einc
from einc.bench_cuda import _events_median, case_geometry

args = sys.argv[1:]
dtype = args.pop(0) if args and ":" not in args[0] else "float32"
tdt = getattr(torch, dtype)
torch.backends.cuda.matmul.allow_tf32 = False
for arg in args:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
    ops = [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]]
    for name, fn in (("einc", lambda: einc.einsum(subs, *ops)), ("torch", lambda: torch.einsum(subs, *ops))):
        walls = []
        for inner in (1, 2, 10):
            t, _ = _events_median(torch, lambda i: fn(), 20, inner)
            walls.append(t * 1e6)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(100):
            fn()
        host = (time.perf_counter() - t0) * 1e4
        torch.cuda.synchronize()
        print(f"{subs:<22} {dtype:<9} {name:<6} us/call at 1/2/10 calls a sample: "
              f"{walls[0]:7.1f} {walls[1]:7.1f} {walls[2]:7.1f}   host {host:6.1f}")
