"""Host time per einc call (no synchronisation inside the loop: the GPU queue absorbs the
kernels) beside the calls' wall time, and where the host time goes (cProfile).

    python3 scripts/host_time.py [dtype] 'EXPR:a=24,...' ...
"""
import cProfile
import pstats
import sys
import time

import torch

import einc
from einc.bench_cuda import case_geometry

args = sys.argv[1:]
dtype = args.pop(0) if args and ":" not in args[0] else "float32"
tdt = getattr(torch, dtype)
for arg in args:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
    ops = [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]]
    for name, fn in (("einc", lambda: einc.einsum(subs, *ops)), ("torch", lambda: torch.einsum(subs, *ops))):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(40):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        print(f"{subs} {name}: host {(t1 - t0) / 40 * 1e6:.1f} us/call, wall {(t2 - t0) / 40 * 1e6:.1f} us/call")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(200):
        einc.einsum(subs, *ops)
    pr.disable()
    torch.cuda.synchronize()
    pstats.Stats(pr).sort_stats("tottime").print_stats(12)
