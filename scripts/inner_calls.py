"""How much of a call's host time the benchmarks' samples expose: one einsum timed with CUDA
events over samples of 1, 3, 5 and 20 back-to-back calls (einc beside torch.einsum), and
einc's call replayed through the raw executable (no Python front end) for the GPU's own time:

    python3 scripts/inner_calls.py 'EXPR:a=72,b=72,...' [DTYPE]
"""
import sys

import torch

import einc
from einc.bench_cuda import _events_median, _rotations, case_geometry

subs, sz = sys.argv[1].split(":")
dtype = sys.argv[2] if len(sys.argv) > 2 else "float32"
tdt = getattr(torch, dtype)
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
print(f"{'calls/sample':>12}{'einc us':>10}{'torch us':>10}{'ratio':>8}")
for inner in (1, 3, 5, 20):
    te, _ = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]), 20, inner)
    tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *sets[i % len(sets)]), 20, inner)
    print(f"{inner:>12}{1e6 * te:>10.1f}{1e6 * tt:>10.1f}{tt / te:>8.2f}")
