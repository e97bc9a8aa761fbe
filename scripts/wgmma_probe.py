"""Which N-major descriptor offsets does wgmma want? Runs an fp16 NN GEMM through the wgmma
kernel with each (LBO, SBO) assignment and reports which one matches cuBLAS (GPU only)."""
import torch

import einc
import einc.api
from einc.codegen.cuda import emit_wgmma

a = torch.randn(256, 192, device="cuda", dtype=torch.float16)
b = torch.randn(192, 384, device="cuda", dtype=torch.float16)
want = (a.float() @ b.float())
for lbo in ("atom_n", "atom_k"):
    emit_wgmma.MN_OFFSETS["lbo"] = lbo
    for tile in emit_wgmma.WGMMA_TILES:
        emit_wgmma.choose_tile = lambda step, t=tile: t
        einc.api._EXECUTABLES.clear()
        got = einc.einsum("ij,jk->ik", a, b).float()
        err = ((got - want).abs().max() / want.abs().max()).item()
        print(f"lbo={lbo:<7} {tile:<13} rel.err {err:.2e} {'OK' if err < 1e-2 else 'WRONG'}")
