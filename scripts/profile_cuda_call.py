"""Where a cached small einsum on device arrays spends its host time (run on a GPU machine)."""
import cProfile
import pstats
import time

import torch

import einc

a = torch.randn(8, 8, device="cuda")
for _ in range(200):
    einc.einsum("ij,jk->ik", a, a)
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(2000):
    einc.einsum("ij,jk->ik", a, a)
torch.cuda.synchronize()
print(f"einc cached 8x8: {(time.perf_counter() - t0) / 2000 * 1e6:.1f} us per call")
cProfile.run('for _ in range(2000): einc.einsum("ij,jk->ik", a, a)', "/tmp/prof")
pstats.Stats("/tmp/prof").sort_stats("tottime").print_stats(10)
