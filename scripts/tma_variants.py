"""A/B of the TMA producer's switches on a few GEMMs (CUDA-event medians, same run):

    python3 scripts/tma_variants.py

cp = the 16-byte cp.async producer (EINC_WGMMA_TMA=0); tma = TMA boxes, L2 promotion 256 B;
opt1 = the consumers' proxy fence kept; opt2 = tensor maps prefetched; l2none / l2_128 = the
maps' L2 promotion; cp again at the end for the run's spread.
"""
from __future__ import annotations

import os

import torch

import einc
import einc.api
import einc.runtime.cuda as rc
from einc.bench_cuda import _events_median
from einc.codegen.cuda import emit_wgmma

CASES = [
    ("bf16 NN 4096", "ij,jk->ik", [(4096, 4096), (4096, 4096)], torch.bfloat16),
    ("bf16 TN 4096", "ik,jk->ij", [(4096, 4096), (4096, 4096)], torch.bfloat16),
    ("bf16 NN 8192", "ij,jk->ik", [(8192, 8192), (8192, 8192)], torch.bfloat16),
    ("fp16 TN 8192", "ik,jk->ij", [(8192, 8192), (8192, 8192)], torch.float16),
    ("bf16 ki,jk 7248", "ki,jk->ji", [(7248, 7248), (7240, 7248)], torch.bfloat16),
    ("bf16 8x2048^3", "bij,bjk->bik", [(8, 2048, 2048), (8, 2048, 2048)], torch.bfloat16),
]
VARIANTS = [("cp", False, "0", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"),
            ("tma", True, "0", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"),
            ("opt1", True, "1", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"),
            ("opt2", True, "2", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"),
            ("l2none", True, "0", "CU_TENSOR_MAP_L2_PROMOTION_NONE"),
            ("l2_128", True, "0", "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"),
            ("cp2", False, "0", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B")]


def main():
    print(f"{'case':<18}{'torch':>8}" + "".join(f"{v[0]:>8}" for v in VARIANTS) + "   (ms; best marked *)")
    for label, expr, shapes, tdt in CASES:
        ops = [torch.randn(s, device="cuda").to(tdt) for s in shapes]
        ref = torch.einsum(expr, *ops)
        tt, _ = _events_median(torch, lambda i: torch.einsum(expr, *ops), 10, 3)
        times, bad = [], []
        for name, tma, opt, l2 in VARIANTS:
            emit_wgmma.TMA, rc._TMAP_L2 = tma, l2
            os.environ["EINC_WGMMA_TMA_OPT"] = opt
            einc.api._EXECUTABLES.clear()
            got = einc.einsum(expr, *ops)
            if ((got.float() - ref.float()).abs().max() / ref.float().abs().max()).item() > 1e-2:
                bad.append(name)
            t, _ = _events_median(torch, lambda i: einc.einsum(expr, *ops), 10, 3)
            times.append(t)
        best = min(times)
        print(f"{label:<18}{tt * 1e3:>8.3f}" + "".join(f"{t * 1e3:>7.3f}{'*' if t == best else ' '}" for t in times)
              + (f"  MISMATCH {bad}" if bad else ""))


if __name__ == "__main__":
    main()
