"""The write floor of an output-bound step: how fast the H200 fills, zeroes and copies a buffer
of a given size (torch, CUDA events, medians), and whether torch.einsum returns ccsd_t's output
as a permuted view (a GEMM in its own order) or materialises it.

    python3 scripts/write_floor.py [MB]
"""
import sys

import torch

from einc.bench_cuda import _events_median

mb = float(sys.argv[1]) if len(sys.argv) > 1 else 184.32
n = int(mb * 1e6 / 2)
x = torch.empty(n, dtype=torch.bfloat16, device="cuda")
y = torch.empty(n, dtype=torch.bfloat16, device="cuda")
for name, fn, moved in (("fill_", lambda i: x.fill_(1.0), n * 2), ("zero_", lambda i: x.zero_(), n * 2),
                        ("copy_", lambda i: y.copy_(x), n * 4)):
    t, _ = _events_median(torch, fn, 20, 3)
    print(f"{name:<8}{mb:8.1f} MB  {t * 1e6:8.1f} us  {moved / t / 1e12:6.2f} TB/s")
s = {"a": 24, "b": 20, "c": 20, "i": 24, "j": 20, "k": 20, "m": 24}
A = torch.randn(24, 24, 20, 24, device="cuda").bfloat16()
B = torch.randn(20, 20, 20, 24, device="cuda").bfloat16()
r = torch.einsum("amji,cbkm->kjicba", A, B)
print("torch.einsum ccsd_t output contiguous:", r.is_contiguous(), "strides", r.stride())
