"""Run a Plan on a CUDA device: one emitted kernel per step, launched on the caller's stream.

A CudaExecutable compiles (or fetches) every step's kernel once, uploads the offset
tables GEMM steps use, and prepares each launch's argument block; a call allocates the
intermediates from the stream-ordered pool, launches, and frees them on the same stream.
"""
from __future__ import annotations

import numpy as np

from .ir import Plan
from .runtime.cuda import CudaRuntime, Launcher


class CudaExecutable:
    """A Plan compiled for one device."""

    def __init__(self, plan: Plan, rt: CudaRuntime):
        from .codegen.cuda.emit import compile_options, emit_step
        self.plan, self.rt = plan, rt
        self.temps = [(i, b.size * b.dtype.itemsize) for i, b in enumerate(plan.buffers) if b.role == "temp"]
        self.inputs = [(i, b.index) for i, b in enumerate(plan.buffers) if b.role == "input"]
        self.empty = int(np.prod(plan.out_shape, dtype=np.int64)) == 0
        self.kernels, self.launchers, self._tables = [], [], []
        options = compile_options(rt.arch)
        for n, step in enumerate(plan.steps):
            kernel = emit_step(plan, step, rt.arch)
            fn = rt.function(kernel, options)
            ptrs = []
            for t in kernel.tables:
                t = np.ascontiguousarray(t, dtype=np.int64)
                p = rt.alloc_persistent(t.nbytes)
                rt.upload(p, t, rt.stream(0))
                ptrs.append(p)
            self._tables += ptrs
            rt.synchronize(rt.stream(0), "table upload")
            label = f"step {n} ({step.text}, strategy={step.strategy}, kernel {kernel.name})"
            self.kernels.append(kernel)
            self.launchers.append((Launcher(rt, fn, kernel, kernel.meta(ptrs), 1 + len(step.operands), label),
                                   (step.result, *step.operands)))

    def __call__(self, input_ptrs, out_ptr: int, stream) -> None:
        """Run every step on ``stream``; returns without synchronising."""
        if self.empty:
            return
        ptrs = [0] * len(self.plan.buffers)
        for i, k in self.inputs:
            ptrs[i] = input_ptrs[k]
        ptrs[self.plan.output] = out_ptr
        temps = []
        try:
            for i, nbytes in self.temps:
                ptrs[i] = self.rt.alloc(nbytes, stream)
                temps.append(ptrs[i])
            for launch, which in self.launchers:
                launch([ptrs[w] for w in which], stream)
        finally:
            for p in temps:
                self.rt.free(p, stream)

    def __del__(self):
        try:
            for p in self._tables:
                self.rt.cu.cuMemFree(self.rt.cu.CUdeviceptr(p))
        except Exception:
            pass
