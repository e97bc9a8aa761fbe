"""einc: an einsum compiler.

``einc.einsum`` gives numpy.einsum's answers, computed by kernels generated for each
contraction's modes, strides and dtypes (LLVM IR JIT-compiled with llvmlite on the CPU).
"""
from . import explain
from .api import ContractExpression, contract_expression, contract_path, einsum
from .errors import (EincCompileError, EincCudaError, EincError, EincShapeError, EincSpecError,
                     EincSyntaxError, EincTypeError, EincValueError)
from .source import compile_source
from .tensor_ops import tensordot, transpose

__version__ = "0.1.0"
__all__ = ["einsum", "contract_path", "contract_expression", "ContractExpression", "compile_source",
           "tensordot", "transpose",
           "EincError", "EincSyntaxError", "EincSpecError", "EincShapeError", "EincTypeError",
           "EincValueError", "EincCompileError", "EincCudaError", "__version__"]
