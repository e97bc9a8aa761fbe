"""compute-sanitizer case for the wgmma stream-K tail (kernels/wgmma.cuh einc_wgmma_sk_combine):
a grid of 4 blocks over 15 tiles of 256x128 (K = 2000: 32 slices), so three tail tiles split
in two; both producers; checked against torch.

    compute-sanitizer --tool racecheck python3 scripts/sk_sanitize_case.py
"""
import sys

import torch

import einc  # noqa: E402
import einc.api  # noqa: E402
from einc.codegen.cuda import emit_wgmma  # noqa: E402

emit_wgmma.MAX_GRID = 4
emit_wgmma.choose_tile = lambda step: "wgmma256x128ws"
bad = 0
for tma in (True, False):
    emit_wgmma.TMA = tma
    einc.api._EXECUTABLES.clear()
    a = torch.randn(700, 2000, device="cuda").to(torch.bfloat16)
    b = torch.randn(2000, 600, device="cuda").to(torch.bfloat16)
    for _ in range(2):
        got = einc.einsum("ij,jk->ik", a, b, strategy="gett").float()
    ref = a.float() @ b.float()
    err = float((got - ref).abs().max() / ref.abs().max())
    print("tma" if tma else "cp.async", "max rel err", err)
    bad += not err < 1e-2
sys.exit(1 if bad else 0)
