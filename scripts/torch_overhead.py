"""Per-call overhead on small CUDA tensors: einc.torch.einsum (the custom op), einc.einsum and
torch.einsum, measured in one run (wall time per call, median of 15 x 300 calls, synchronised).

    python3 scripts/torch_overhead.py [n]      (n x n operands, default 8)
"""
import statistics
import sys
import time

import torch

import einc
import einc.torch as et

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
calls = {"torch.einsum": lambda: torch.einsum("ij,jk->ik", a, b),
         "einc.einsum": lambda: einc.einsum("ij,jk->ik", a, b),
         "einc.torch.einsum": lambda: et.einsum("ij,jk->ik", a, b),
         # where the custom op's time goes: its Python body alone (no dispatcher), the body's
         # einc call, and the op through the dispatcher without autograd
         "  op body only": lambda: et._einsum_op._init_fn("ij,jk->ik", [a, b]),
         "  body's einc call": lambda: einc.einsum("ij,jk->ik", a, b, backend="cuda"),
         "  torch.ops, no_grad": lambda: _no_grad(lambda: torch.ops.einc.einsum("ij,jk->ik", [a, b]))}


def _no_grad(f):
    with torch.no_grad():
        return f()

for f in calls.values():
    torch.testing.assert_close(f(), a @ b)
res = {k: [] for k in calls}
for _ in range(15):
    for k, f in calls.items():  # interleaved, so drift hits all three alike
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(300):
            f()
        torch.cuda.synchronize()
        res[k].append((time.perf_counter() - t) / 300)
for k, v in res.items():
    print(f"{k:<20} {statistics.median(v) * 1e6:7.1f} us per call ({n}x{n} fp32, median of 15 x 300)")
