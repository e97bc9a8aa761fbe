"""Run a Plan on the CPU: compile (or fetch) each step's kernel once, then call them.

An Executable holds everything a repeated call needs — function pointers, extents,
strides and GEMM offset tables as ready ctypes/numpy arrays — so a call only gathers
data pointers, allocates intermediates and makes one foreign call per step.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .codegen.llvm.loops import LoopNestKey, emit_loops
from .ir import Plan, Step
from .runtime.cpu import jit

_VP = ctypes.c_void_p


def loop_key(step: Step, dtypes) -> LoopNestKey:
    """The structural key of a generic/reduce step (what its kernel specialises on)."""
    kinds, _, _, acc, unit = step.config
    return LoopNestKey(tuple(d.name for d in dtypes[1:]), dtypes[0].name,
                       step.compute.name, kinds, acc, unit)


def gett_tables(step: Step):
    """(dims, tab) for the GEMM kernel: each mode group flattened to per-tensor offsets."""
    groups = {g: [j for j, m in enumerate(step.modes) if m.kind == g] for g in ("batch", "m", "n", "k")}

    def offsets(group, t):
        off = np.zeros(1, dtype=np.int64)
        for j in groups[group]:
            off = (off[:, None] + np.arange(step.modes[j].extent, dtype=np.int64) * step.strides[t][j]).ravel()
        return off

    dims = np.array([offsets("batch", 0).size, offsets("m", 0).size, offsets("n", 0).size,
                     offsets("k", 1).size], dtype=np.int64)
    # tensors: 0 = C, 1 = A, 2 = B
    tab = np.concatenate([offsets("batch", 1), offsets("batch", 2), offsets("batch", 0),
                          offsets("m", 1), offsets("m", 0), offsets("n", 2), offsets("n", 0),
                          offsets("k", 1), offsets("k", 2)])
    return dims, tab


def step_dtypes(plan: Plan, step: Step) -> list:
    """Dtypes of a step's tensors: the result first, then its operands."""
    return [plan.buffers[step.result].dtype] + [plan.buffers[o].dtype for o in step.operands]


def kernel_source(plan: Plan, step: Step):
    """(structural key, build) for a step's CPU kernel; build() -> (IR text, name)."""
    if step.strategy == "gett":
        from .codegen.llvm.gett import emit_gett
        bits, dt = jit().host_vector_bits(), step.compute
        return ("gett", dt.name, bits), lambda: emit_gett(dt, bits)
    key = loop_key(step, step_dtypes(plan, step))
    return key, lambda: emit_loops(key)


class _Workspace(threading.local):
    """Per-thread scratch for packed GEMM panels (calls on other threads never share it)."""

    def get(self, elems: int, dtype) -> np.ndarray:
        buf = getattr(self, "buf", None)
        nbytes = elems * np.dtype(dtype).itemsize + 64
        if buf is None or buf.nbytes < nbytes:
            buf = self.buf = np.empty(nbytes, dtype=np.uint8)
        start = (-buf.ctypes.data) % 64
        return buf[start:start + elems * np.dtype(dtype).itemsize]


_WORK = _Workspace()


class Executable:
    """A Plan with its kernels compiled and its arguments marshalled."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.temps = [(i, b.size, b.dtype) for i, b in enumerate(plan.buffers) if b.role == "temp"]
        self.inputs = [(i, b.index) for i, b in enumerate(plan.buffers) if b.role == "input"]
        self.runners = [self._runner(s) for s in plan.steps]
        self.empty = int(np.prod(plan.out_shape, dtype=np.int64)) == 0

    def _runner(self, step: Step):
        key, build = kernel_source(self.plan, step)
        addr = jit().get(key, build)
        if step.strategy == "gett":
            from .codegen.llvm.gett import gett_workspace_elems
            bits = jit().host_vector_bits()
            dt = step.compute
            fn = ctypes.CFUNCTYPE(None, _VP, _VP, _VP, _VP, _VP, _VP, ctypes.c_int64, ctypes.c_int64)(addr)
            dims, tab = gett_tables(step)
            work_elems = gett_workspace_elems(dt, bits)
            n = int(dims[2])
            c, (a, b) = step.result, step.operands
            dp, tp = dims.ctypes.data, tab.ctypes.data

            def run(ptrs, _keep=(dims, tab)):
                work = _WORK.get(work_elems, dt)
                fn(ptrs[c], ptrs[a], ptrs[b], dp, tp, work.ctypes.data, 0, n)
            return run
        nt = len(step.operands) + 1
        fn = ctypes.CFUNCTYPE(None, *([_VP] * (nt + 2)))(addr)
        _, ext, strides, _, _ = step.config
        ext_a = (ctypes.c_int64 * max(1, len(ext)))(*ext)
        str_a = (ctypes.c_int64 * max(1, nt * len(ext)))(*[s for row in strides for s in row])
        order = (step.result, *step.operands)

        def run(ptrs, _keep=(ext_a, str_a)):
            fn(*[ptrs[i] for i in order], ext_a, str_a)
        return run

    def __call__(self, arrays, out: np.ndarray) -> np.ndarray:
        if self.empty:
            return out
        ptrs = [0] * len(self.plan.buffers)
        for i, k in self.inputs:
            ptrs[i] = arrays[k].ctypes.data
        ptrs[self.plan.output] = out.ctypes.data
        keep = []
        for i, size, dt in self.temps:
            t = np.empty(max(size, 1), dtype=dt)
            keep.append(t)
            ptrs[i] = t.ctypes.data
        for run in self.runners:
            run(ptrs)
        return out
