"""Time einsums on the GPU: einc beside torch.einsum in the same run (CUDA events, medians).

    python3 scripts/case_bench.py [DTYPE] 'EXPR:a=72,b=72,...' ...

CASE_ORDER=C passes order="C" to einc (its result C-contiguous; default "K", numpy's layout).
Prints per case: milliseconds, TFLOP/s (2 x the product of every extent) and the ratio, and
checks einc's result against torch.einsum's. Inputs are rotated past L2 like the suites.
"""
import os
import sys

import torch

import einc
from einc.bench_cuda import TOLERANCE, _events_median, _rotations, case_geometry

args = sys.argv[1:]
order = os.environ.get("CASE_ORDER", "K")
dtype = args.pop(0) if args and ":" not in args[0] else "float32"
tdt = getattr(torch, dtype)
torch.backends.cuda.matmul.allow_tf32 = False
print(f"{'einsum':<24}{'sizes':<34}{'einc ms':>9}{'torch ms':>9}{'einc TF':>9}{'torch TF':>9}{'x':>6}  kernel")
for arg in args:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
    sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
    ref = torch.einsum(subs, *sets[0])
    got = einc.einsum(subs, *sets[0], order=order)
    ok = torch.allclose(got.double(), ref.double(), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * float(ref.abs().max()))
    tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *sets[i % len(sets)]), 10, 3)
    te, _ = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)], order=order), 10, 3)
    plan = einc.api.plan_for(subs, geo["shapes"], dtype, backend="cuda")
    kern = "+".join(s.strategy + ("/skinny" if ("tile", "skinny") in s.config else "") for s in plan.steps)
    f = geo["flops"]
    print(f"{subs:<24}{sz:<34}{te * 1e3:>9.3f}{tt * 1e3:>9.3f}{f / te / 1e12:>9.2f}{f / tt / 1e12:>9.2f}"
          f"{tt / te:>6.2f}  {kern}{'' if ok else '  MISMATCH'}")
