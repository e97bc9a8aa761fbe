"""``compile_source``: the kernels einc generates for an einsum, as text (what `einc compile` prints)."""
from __future__ import annotations

from .errors import EincValueError


def compile_source(subscripts, *shapes, dtype="float64", target="llvm", arch="sm_90",
                   optimize="auto", strategy=None, precision=None) -> list[str]:
    """The generated source of each step of the plan for C-contiguous operands of ``shapes``.

    ``target="llvm"`` gives the LLVM IR the CPU backend JIT-compiles; ``target="cuda"`` gives
    one self-contained CUDA C++ translation unit per step (it compiles with NVRTC or
    ``nvcc -arch=ARCH -c``). Each text starts with a comment naming the step and its
    strategy. Nothing is compiled or run, so no GPU is needed for either target.

    >>> import einc
    >>> (ir,) = einc.compile_source("ij,ij->i", (100, 64), (100, 64))
    >>> "define void" in ir
    True
    """
    if target not in ("llvm", "cuda"):
        raise EincValueError(f"target={target!r}: use llvm or cuda")
    from .api import plan_for
    plan = plan_for(subscripts, list(shapes), dtype, optimize=optimize, strategy=strategy,
                    backend="cpu" if target == "llvm" else "cuda", precision=precision)
    chunks = []
    for i, step in enumerate(plan.steps):
        if target == "cuda":
            from .codegen.cuda.emit import emit_step
            k = emit_step(plan, step, arch)
            how = "-gencode=arch=compute_90a,code=sm_90a" if k.arch == "sm_90a" else f"-arch={arch}"
            chunks.append(f"// ===== einc step {i} of {len(plan.steps)}: {step.text}  strategy={step.strategy}\n"
                          f"// compile: nvcc {how} -c FILE.cu   (or NVRTC)\n{k.source}")
            continue
        from .execute import kernel_source
        _, build = kernel_source(plan, step)
        text, name = build()
        chunks.append(f"; einc step {i}: {step.text}  strategy={step.strategy}  kernel={name}\n{text}")
    return chunks
