"""Host time of one einc.einsum call on CUDA tensors (no synchronisation), beside torch.einsum,
and where einc's goes (cProfile, the top entries by own time):

    python3 scripts/host_overhead.py [dtype] 'EXPR:a=4,b=4,...' ...

HOST_SORT=tottime,cumulative HOST_LINES=30 print both orders, longer.
(session 22 ran it as scripts/host_time.py, 40 calls a figure, on bf16 TCCG sizes)
"""
import cProfile
import os
import pstats
import sys
import time

import torch

import einc

args = sys.argv[1:]
dtype = getattr(torch, args.pop(0) if args and ":" not in args[0] else "float32")
for arg in args:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    ops = [torch.randn(*[sizes[l] for l in t], device="cuda").to(dtype) for t in subs.split("->")[0].split(",")]
    for name, fn in (("einc", lambda: einc.einsum(subs, *ops)), ("torch", lambda: torch.einsum(subs, *ops))):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        n = 200
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        print(f"{arg:<44} {name:<6} host {1e6 * (t1 - t0) / n:7.1f} us/call, with the GPU {1e6 * (t2 - t0) / n:7.1f}")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(200):
        einc.einsum(subs, *ops)
    pr.disable()
    torch.cuda.synchronize()
    for key in os.environ.get("HOST_SORT", "tottime").split(","):
        pstats.Stats(pr).sort_stats(key).print_stats(int(os.environ.get("HOST_LINES", "14")))
