"""Time every tensor-core tile on one GEMM and check the SASS really uses tensor cores.

    python3 scripts/mma_tiles.py [N] [dtype] [expr]     (on a GPU; default 8192 float16 ij,jk->ik)
    TILES=mma128x128,mma128x256 python3 scripts/mma_tiles.py ...   (a subset)

Prints per tile: milliseconds (median of CUDA-event samples), TFLOP/s, and the number of
HMMA/IMMA instructions in the kernel's SASS (cuobjdump, when on PATH), beside cuBLAS.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import torch

import einc
import einc.api
from einc.codegen.cuda import emit_mma, emit_wgmma
from einc.codegen.cuda.emit import compile_options, emit_step
from einc.runtime.cuda import compile_cubin


def median_ms(fn, repeat=15):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn(); fn(); torch.cuda.synchronize()
    out = []
    for _ in range(repeat):
        s.record(); fn(); e.record(); e.synchronize()
        out.append(s.elapsed_time(e))
    return statistics.median(out)


def sass_counts(kernel) -> str:
    if not shutil.which("cuobjdump"):
        return "(no cuobjdump)"
    cubin = compile_cubin(kernel.source, kernel.name, dict(compile_options("sm_90"), arch=kernel.arch or "sm_90"))
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    sass = subprocess.run(["cuobjdump", "--dump-sass", f.name], capture_output=True, text=True).stdout
    os.unlink(f.name)
    out_dir = os.environ.get("OUT")
    if out_dir:
        with open(os.path.join(out_dir, f"{kernel.name}.sass"), "w") as g:
            g.write(sass)
    ops = {op: sass.count(op) for op in ("HGMMA", "IGMMA", "HMMA", "IMMA", "DMMA", "LDSM", "LDGSTS", "UTMALDG", "FFMA", "F2F.F64.F32", "DMUL") if op in sass}
    return " ".join(f"{k}={v}" for k, v in ops.items())


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    dt = sys.argv[2] if len(sys.argv) > 2 else "float16"
    expr = sys.argv[3] if len(sys.argv) > 3 else "ij,jk->ik"
    tdt = getattr(torch, dt)
    kw = {"precision": "tf32"} if dt == "float32" else {"dtype": "int32"} if dt == "int8" else {}
    mk = (lambda: torch.randint(-8, 8, (n, n), device="cuda", dtype=tdt)) if dt == "int8" else \
        (lambda: torch.randn(n, n, device="cuda", dtype=tdt))
    a, b = mk(), mk()
    flops = 2 * n**3
    if dt == "int8":
        bc = b.t() if expr == "ik,jk->ij" else b.t().contiguous().t()
        ref = lambda: torch._int_mm(a, bc)
    else:
        torch.backends.cuda.matmul.allow_tf32 = True
        ref = (lambda: a @ b.t()) if expr == "ik,jk->ij" else (lambda: a @ b)
    tb = median_ms(ref)
    print(f"{dt} {expr} n={n}: cuBLAS {tb:.3f} ms {flops / tb / 1e9:.1f} TFLOP/s")
    plan = einc.api.plan_for(expr, [(n, n), (n, n)], dt, backend="cuda", **({"precision": "tf32"} if dt == "float32" else {}))
    only = os.environ.get("TILES")
    for tile in (only.split(",") if only else [*emit_wgmma.WGMMA_TILES, *emit_mma.MMA_TILES]):
        emit_mma.choose_tile = lambda step, t=tile: t if t in emit_mma.MMA_TILES else "mma128x128"
        emit_wgmma.choose_tile = lambda step, t=tile: t
        emit_wgmma.ENABLED = tile in emit_wgmma.WGMMA_TILES
        einc.api._EXECUTABLES.clear()
        k = emit_step(plan, plan.steps[0])
        r = einc.einsum(expr, a, b, **kw)
        want = ref()
        err = (r.double() - want.double()).abs().max().item() / max(want.double().abs().max().item(), 1e-30)
        t = median_ms(lambda: einc.einsum(expr, a, b, **kw))
        print(f"  {tile:<12} {t:8.3f} ms {flops / t / 1e9:7.1f} TFLOP/s  {tb / t:5.2f}x cuBLAS  "
              f"rel.err {err:.1e}  smem {k.smem}  {sass_counts(k)}")


if __name__ == "__main__":
    main()
