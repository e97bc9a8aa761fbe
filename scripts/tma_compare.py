"""The warp-specialised wgmma tiles with each producer: TMA boxes against 16-byte cp.async.

    python3 scripts/tma_compare.py            (on an sm_90 GPU)

Per case: einc with EINC_WGMMA_TMA on and off (emit_wgmma.TMA toggled in-process, kernels
re-planned), torch beside it (cuBLAS for the GEMMs), CUDA-event medians; results checked
against torch's, and the SASS counts (UTMALDG: TMA loads; LDGSTS: cp.async; HGMMA).
"""
from __future__ import annotations

import sys

import torch

import einc
import einc.api
from einc.bench_cuda import _events_median
from einc.codegen.cuda import emit_wgmma
from einc.codegen.cuda.emit import emit_step

sys.path.insert(0, "scripts")
from mma_tiles import sass_counts  # noqa: E402

CASES = [  # label, einsum, shapes, dtype, precision
    ("bf16 NN 8192^3", "ij,jk->ik", [(8192, 8192), (8192, 8192)], "bfloat16", None),
    ("bf16 TN 8192^3", "ik,jk->ij", [(8192, 8192), (8192, 8192)], "bfloat16", None),
    ("fp16 NN 8192^3", "ij,jk->ik", [(8192, 8192), (8192, 8192)], "float16", None),
    ("fp16 TN 8192^3", "ik,jk->ij", [(8192, 8192), (8192, 8192)], "float16", None),
    ("tf32 TN 8192^3", "ik,jk->ij", [(8192, 8192), (8192, 8192)], "float32", "tf32"),
    ("bf16 NN 4096^3", "ij,jk->ik", [(4096, 4096), (4096, 4096)], "bfloat16", None),
    ("bf16 ccsd ki,jk->ji", "ki,jk->ji", [(7248, 7248), (7240, 7248)], "bfloat16", None),
    ("bf16 batch 8x2048^3", "bij,bjk->bik", [(8, 2048, 2048), (8, 2048, 2048)], "bfloat16", None),
]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{'case':<22}{'torch ms':>9}{'TMA ms':>9}{'cp ms':>9}{'TMA TF':>8}{'cp TF':>8}{'TMA/torch':>10}"
          f"{'cp/torch':>9}  check  sass(TMA)")
    for label, expr, shapes, dt, prec in CASES:
        tdt = getattr(torch, dt)
        ops = [torch.randn(s, device="cuda").to(tdt) for s in shapes]
        if prec == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
        ref = torch.einsum(expr, *ops)
        tt, _ = _events_median(torch, lambda i: torch.einsum(expr, *ops), 10, 3)
        torch.backends.cuda.matmul.allow_tf32 = False
        flops = 2.0
        for n in {l: n for s, t in zip(shapes, expr.split("->")[0].split(",")) for l, n in zip(t, s)}.values():
            flops *= n
        res, sass, ok = {}, "", True
        for tma in (True, False):
            emit_wgmma.TMA = tma
            einc.api._EXECUTABLES.clear()
            got = einc.einsum(expr, *ops, precision=prec)
            err = ((got.double() - ref.double()).abs().max() / ref.double().abs().max()).item()
            ok = ok and err < (2e-2 if prec == "tf32" else 1e-2)
            res[tma], _ = _events_median(torch, lambda i: einc.einsum(expr, *ops, precision=prec), 10, 3)
            if tma:
                p = einc.api.plan_for(expr, shapes, dt, backend="cuda", precision=prec)
                ks = [emit_step(p, s) for s in p.steps]
                sass = "; ".join(f"{k.name.split('_')[1]} tmaps={len(k.tmaps)} {sass_counts(k)}" for k in ks)
        emit_wgmma.TMA = True
        print(f"{label:<22}{tt * 1e3:>9.3f}{res[True] * 1e3:>9.3f}{res[False] * 1e3:>9.3f}"
              f"{flops / res[True] / 1e12:>8.1f}{flops / res[False] / 1e12:>8.1f}{tt / res[True]:>10.2f}"
              f"{tt / res[False]:>9.2f}  {'ok' if ok else 'MISMATCH'}  {sass}")


if __name__ == "__main__":
    main()
