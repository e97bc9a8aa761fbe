"""GEMM-order copies on the GPU: einc's kernel for a permutation (TMA rows copy, or with
EINC_COPY_TMA off the SIMT rows copy / transpose) beside torch's permute().contiguous(),
CUDA events, medians; TB/s counts the bytes read and written.

    python3 scripts/copy_bench.py dtype 'njmi->mnji:96x84x84x96' ...
"""
import sys

import torch

import einc
import einc.api
from einc.bench_cuda import _events_median
from einc.codegen.cuda import emit

dtype = sys.argv[1]
tdt = getattr(torch, dtype)
for arg in sys.argv[2:]:
    subs, shape = arg.split(":")
    shape = tuple(int(x) for x in shape.split("x"))
    x = torch.randn(shape, device="cuda").to(tdt)
    lhs, rhs = subs.split("->")
    perm = [lhs.index(c) for c in rhs]
    want = x.permute(*perm).contiguous()
    out = torch.empty_like(want)
    nbytes = 2 * x.numel() * x.element_size()
    row = []
    for tma in (True, False):
        emit.COPY_TMA[0] = tma
        einc.api._EXECUTABLES.clear()
        einc.einsum(subs, x, out=out)
        assert torch.equal(out, want), (subs, tma)
        p = einc.api.plan_for(subs, [shape], dtype, backend="cuda")
        name = emit.emit_step(p, p.steps[0], "sm_90").name
        t, _ = _events_median(torch, lambda i: einc.einsum(subs, x, out=out), 20, 10)
        row.append(f"{name.split('_')[1]}{'_' + name.split('_')[2] if name.startswith('einc_copy') else ''} "
                   f"{t * 1e6:7.1f} us {nbytes / t / 1e12:5.2f} TB/s")
    t, _ = _events_median(torch, lambda i: out.copy_(x.permute(*perm)), 20, 10)
    print(f"{subs:<16}{str(shape):<22}{dtype:<9} einc " + " | ".join(row)
          + f" | torch copy_ {t * 1e6:7.1f} us {nbytes / t / 1e12:5.2f} TB/s")
emit.COPY_TMA[0] = True
