"""Where one einsum call's GPU time goes: wall time per call (CUDA events, back to back)
beside each kernel's duration and the gaps between them (torch.profiler / CUPTI), einc
and torch.einsum, same inputs.

    python3 scripts/timeline.py [dtype] 'EXPR:a=24,b=20,...' ...
"""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

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
        wall, _ = _events_median(torch, lambda i: fn(), 10, 5)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
        evs = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                     key=lambda e: e.time_range.start)
        per = {}
        for e in evs:
            per.setdefault(e.name[:60], []).append(e.time_range.elapsed_us())
        span = (evs[-1].time_range.end - evs[0].time_range.start) / 5 if evs else 0
        busy = sum(e.time_range.elapsed_us() for e in evs) / 5
        print(f"{subs} {dtype} {name}: wall {wall * 1e6:.1f} us/call, GPU span {span:.1f}, busy {busy:.1f}")
        for k, v in per.items():
            print(f"    {statistics.median(v):8.1f} us x{len(v) // 5}  {k}")
