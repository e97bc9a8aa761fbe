"""CUDA C code generation: kernels/*.cuh hold the kernel families, emit.py specialises them.

>>> from einc.codegen.cuda import emit_step, compile_options
>>> compile_options("sm_90")["std"]
'c++17'
"""
from .emit import CudaStepKernel, compile_options, emit_step

__all__ = ["CudaStepKernel", "compile_options", "emit_step"]
