"""The dtypes einc computes in, and the one place their accumulation rules live."""
from __future__ import annotations

import numpy as np

from .errors import EincTypeError

try:  # numpy has no bfloat16; ml_dtypes (JAX's) gives it one, which torch/DLPack map to
    import ml_dtypes as _ml_dtypes
    BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes comes with the cuda extra
    BFLOAT16 = None

SUPPORTED = tuple(np.dtype(t) for t in (
    "bool", "int8", "uint8", "int16", "int32", "int64",
    "float16", "float32", "float64", "complex64", "complex128")) + ((BFLOAT16,) if BFLOAT16 else ())
GPU_ONLY = (BFLOAT16,) if BFLOAT16 else ()  # dtypes the llvmlite CPU backend does not compute in


def kind(dtype: np.dtype) -> str:
    """numpy's kind letter, with bfloat16 (kind 'V' in ml_dtypes) counted as a float."""
    return "f" if dtype == BFLOAT16 else dtype.kind


def check_supported(dtype, what: str) -> np.dtype:
    """``dtype`` as np.dtype if einc computes in it, else an EincTypeError naming ``what``."""
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as e:  # np.dtype("ab,c") is a ValueError
        raise EincTypeError(f"{what}: {dtype!r} is not a dtype") from e
    if dt.newbyteorder("=") not in SUPPORTED:
        names = ", ".join(str(d) for d in SUPPORTED)
        raise EincTypeError(f"{what} has dtype {dt}, which einc does not support (supported: {names})")
    if not dt.isnative:
        raise EincTypeError(f"{what} has non-native byte order ({dt.str}); use arr.astype(arr.dtype.newbyteorder('='))")
    return dt


def accumulator(dtype: np.dtype) -> np.dtype:
    """Accumulate wide: float16 and bfloat16 sum in float32; every other dtype in itself.

    Integer sums wrap exactly as numpy's do: modular arithmetic gives the same low bits
    whatever width it accumulates in, so int8 in int8 equals int8 in int32 truncated.
    """
    return np.dtype(np.float32) if dtype == np.float16 or dtype == BFLOAT16 else np.dtype(dtype)
