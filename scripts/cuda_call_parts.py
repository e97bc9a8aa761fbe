"""Host cost of each part of a cached einsum on torch CUDA tensors (run on a GPU machine):
the keyword-free hot path (cuda_call.TORCH_HOT), the general device-array path (the same
call with optimize="auto" spelled out), torch.einsum, and the pieces of a call.

    python3 scripts/cuda_call_parts.py [dtype 'EXPR:a=4,b=4,...'] ...
"""
import sys
import time

import torch

import einc
from einc.cuda_call import TORCH_HOT
from einc.runtime.device_arrays import current_stream, view
from einc.runtime.cuda import runtime


def per_call(fn, n=2000):
    fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t0) / n * 1e6)
        torch.cuda.synchronize()
    return min(best)


args = sys.argv[1:] or ["float32", "ij,jk->ik:i=8,j=8,k=8"]
while args:
    tdt = getattr(torch, args.pop(0))
    subs, sz = args.pop(0).split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    ops = [torch.randn(*[sizes[c] for c in t], device="cuda").to(tdt) for t in subs.split("->")[0].split(",")]
    for _ in range(3):
        einc.einsum(subs, *ops)
    torch.cuda.synchronize()
    rt = runtime()
    hot = [v for k, v in TORCH_HOT.items() if k[0] == subs]
    ex = hot[0][0] if hot else [v for k, v in einc.api._EXECUTABLES.data.items() if k[0] == "cuda-fast" and k[1] == subs][0]
    views = [view(x, i) for i, x in enumerate(ops)]
    stream = rt.stream(current_stream(views))
    launcher, which = ex.launchers[0]
    out = torch.empty(ex.plan.out_shape, device="cuda", dtype=tdt)
    ptrs = [x.data_ptr() for x in ops]
    raw = torch._C._cuda_getCurrentRawStream
    parts = {
        "einc.einsum (hot path)": lambda: einc.einsum(subs, *ops),
        "einc.einsum (general path)": lambda: einc.einsum(subs, *ops, optimize="auto"),
        "torch.einsum": lambda: torch.einsum(subs, *ops),
        "view per operand": lambda: [view(x, i) for i, x in enumerate(ops)],
        "current raw stream": lambda: raw(0),
        "torch.empty": lambda: torch.empty(ex.plan.out_shape, dtype=tdt, device=ops[0].device),
        "executable call": lambda: ex(ptrs, out.data_ptr(), stream),
        "launcher alone": lambda: launcher([out.data_ptr(), *ptrs][:len(which)], stream),
    }
    print(f"--- {tdt} {subs} {sz}: hot entry {'yes' if hot else 'NO'}; steps",
          [(s.strategy, s.text) for s in ex.plan.steps], "kernel", ex.kernels[0].name)
    for name, fn in parts.items():
        print(f"  {name:<28}{per_call(fn):8.2f} us")
