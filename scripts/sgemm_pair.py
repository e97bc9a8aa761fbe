"""cuBLAS SGEMM and einc's SIMT gett on one n^3 fp32 GEMM, alternated (for ncu), then
cuBLAS DGEMM / SGEMM / einc timed with CUDA events (median of 15).

    python3 scripts/sgemm_pair.py [n] [--time]
"""
import sys

import torch

import einc

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mma_tiles import median_ms  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 4096
torch.backends.cuda.matmul.allow_tf32 = False
a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
for _ in range(2):
    a @ b
    einc.einsum("ij,jk->ik", a, b)
torch.cuda.synchronize()
if "--time" in sys.argv:
    f = 2 * n ** 3 / 1e9
    ad, bd = a.double(), b.double()
    for name, fn in [("cuBLAS SGEMM", lambda: a @ b), ("einc gett", lambda: einc.einsum("ij,jk->ik", a, b)),
                     ("cuBLAS DGEMM", lambda: ad @ bd)]:
        t = median_ms(fn)
        print(f"{name:<14} n={n}: {t:.3f} ms {f / t:.1f} TFLOP/s")
