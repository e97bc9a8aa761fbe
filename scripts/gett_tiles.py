"""Time every SIMT gett tile on one GEMM beside cuBLAS (GPU only).

    python3 scripts/gett_tiles.py [N] [dtype] [expr]     (default 4096 float32 ij,jk->ik)
"""
from __future__ import annotations

import sys

import torch

import einc
import einc.api
from einc.codegen.cuda import emit

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from mma_tiles import median_ms  # noqa: E402  (same timing as the tensor-core sweep)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    dt = getattr(torch, sys.argv[2] if len(sys.argv) > 2 else "float32")
    expr = sys.argv[3] if len(sys.argv) > 3 else "ij,jk->ik"
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = torch.randn(n, n, device="cuda", dtype=dt), torch.randn(n, n, device="cuda", dtype=dt)
    ref = (lambda: a @ b.t()) if expr == "ik,jk->ij" else (lambda: a @ b)
    tb = median_ms(ref)
    flops = 2 * n**3
    print(f"{dt} {expr} n={n}: cuBLAS {tb:.3f} ms {flops / tb / 1e9:.1f} TFLOP/s")
    orig = emit._emit_gett
    for tile in emit.GETT_TILES:
        emit._emit_gett = lambda step, d, c, t=None, tile=tile: orig(step, d, c, tile)
        einc.api._EXECUTABLES.clear()
        r = einc.einsum(expr, a, b)
        err = ((r - ref()).abs().max() / ref().abs().max()).item()
        t = median_ms(lambda: einc.einsum(expr, a, b))
        print(f"  {tile:<12} {t:8.3f} ms {flops / t / 1e9:7.1f} TFLOP/s  {tb / t:5.2f}x cuBLAS  rel.err {err:.1e}")
    emit._emit_gett = orig


if __name__ == "__main__":
    main()
