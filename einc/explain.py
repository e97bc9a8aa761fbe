"""Human-readable plans: what `einc explain` prints."""
from __future__ import annotations

from .cost import explain_lines
from .ir import Plan
from .plan import label_text

KIND_ORDER = ("batch", "m", "n", "k", "free", "sum")


def human(n: float) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if abs(n) < 1000:
            return f"{n:.3g}{unit}"
        n /= 1000
    return f"{n:.3g}P"


def describe(plan: Plan) -> str:
    """The path, each step's mode classes, strategy, FLOPs and bytes, the largest temp;
    for a CUDA plan also each step's kernel choice and predicted time, and the total."""
    gpu, gpu_tail = explain_lines(plan) if plan.backend == "cuda" else ((), ())
    lines = [f"einsum: {plan.bound.spec.text or '(sublist form)'}",
             f"output: shape {plan.out_shape}, dtype {plan.out_dtype}",
             f"path: {list(plan.path)}", f"steps: {len(plan.steps)}"]
    for i, s in enumerate(plan.steps):
        dst = "output" if s.result == plan.output else f"t{s.result}"
        srcs = ", ".join(f"op{plan.buffers[o].index}" if plan.buffers[o].role == "input" else f"t{o}"
                         for o in s.operands)
        lines.append(f"  [{i}] {s.text:<24} {srcs} -> {dst}   strategy={s.strategy}")
        groups = []
        for kind in KIND_ORDER:
            ms = [m for m in s.modes if m.kind == kind]
            if ms:
                groups.append(f"{kind}={label_text([m.label for m in ms])}"
                              f"({'x'.join(str(m.extent) for m in ms)})")
        lines.append(f"      modes: {' '.join(groups) or '(scalar)'}")
        extra = ""
        if s.strategy in ("generic", "reduce"):
            kinds, ext, _, acc, unit = s.config
            extra = f"   loops={''.join(kinds) or '-'} extents={list(ext)} accumulate={acc}"
        lines.append(f"      flops={human(s.flops)} bytes={human(s.bytes)} compute={s.compute}{extra}")
        lines += gpu[i:i + 1]
    lines.append(f"largest intermediate: {plan.largest_intermediate} elements")
    lines += gpu_tail
    return "\n".join(lines)
