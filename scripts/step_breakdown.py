"""Where the bf16 ccsd ijkl plans spend their time: each copy and the GEMM on pre-copied
operands timed alone (CUDA-event medians), beside the whole call and torch.einsum.

    python3 scripts/step_breakdown.py
"""
from __future__ import annotations

import torch

import einc
from einc.bench_cuda import _events_median

SIZES = dict(i=96, j=84, k=84, l=84, m=84, n=96)
SIZES2 = dict(i=96, j=84, k=84, l=84, m=96, n=96)
ROWS = [  # label, einsum, sizes, operand layouts to make (einsum input strings)
    ("njmi,kmln whole", "njmi,kmln->lkji", SIZES),
    ("  copy njmi->jinm", "njmi->jinm", SIZES),
    ("  copy kmln->lknm", "kmln->lknm", SIZES),
    ("  gemm jinm,lknm->lkji", "jinm,lknm->lkji", SIZES),
    ("GEMM 7056x8064x8064 TN", "ik,jk->ij", dict(i=8064, j=7056, k=8064)),
    ("GEMM 8192^3 TN", "ik,jk->ij", dict(i=8192, j=8192, k=8192)),
    ("lnim,kmjn whole", "lnim,kmjn->lkji", SIZES2),
    ("  copy lnim->linm", "lnim->linm", SIZES2),
    ("  copy kmjn->kjnm", "kmjn->kjnm", SIZES2),
    ("  gemm linm,kjnm->lkji (C tabled)", "linm,kjnm->lkji", SIZES2),
    ("  gemm linm,kjnm->kjli (C in GEMM order)", "linm,kjnm->kjli", SIZES2),
    ("  gemm lnim,kjnm->lkji (A tabled)", "lnim,kjnm->lkji", SIZES2),
    ("  permute kjli->lkji (fp32)", "kjli->lkji", SIZES2),
]


def main():
    print(f"{'step':<44}{'einc ms':>9}{'torch ms':>9}{'TFLOP/s':>9}")
    for label, subs, sizes in ROWS:
        lhs, rhs = subs.split("->")
        dt = torch.float32 if "fp32" in label else torch.bfloat16
        ops = [torch.randn([sizes[c] for c in t], device="cuda").to(dt) for t in lhs.split(",")]
        te, _ = _events_median(torch, lambda i: einc.einsum(subs, *ops), 10, 3)
        tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *ops), 10, 3)
        flops = 2.0
        for c in set(lhs.replace(",", "")):
            flops *= sizes[c]
        gemm = "," in lhs
        print(f"{label:<44}{te * 1e3:>9.3f}{tt * 1e3:>9.3f}{flops / te / 1e12 if gemm else 0:>9.1f}")


if __name__ == "__main__":
    main()
