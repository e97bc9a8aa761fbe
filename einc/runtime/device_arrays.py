"""Device-array interop: CUDA Array Interface (CuPy, PyTorch, Numba) and DLPack.

An operand becomes a DeviceView (pointer, shape, element strides, dtype) used in place;
results are allocated by the operands' own library (torch.empty, cupy.empty) so the
caller gets its kind of array back, produced on its current stream.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..dtypes import BFLOAT16
from ..errors import EincTypeError
from ..ir import ShapeLike

KDL_CUDA, KDL_CUDA_MANAGED = 2, 13


@dataclass
class DeviceView(ShapeLike):
    """A strided device tensor einc can address; ``owner`` keeps the producer alive."""

    ptr: int
    shape: tuple
    strides: tuple  # elements
    dtype: np.dtype
    library: str  # "torch", "cupy", "dlpack", "cai"
    owner: object
    stream: int | None = None  # CAI v3: the producer's stream, if it gave one

    @property
    def byte_strides(self):
        return tuple(s * self.dtype.itemsize for s in self.strides)


def is_device_array(x) -> bool:
    """True for objects living in CUDA memory (CAI, or DLPack on a CUDA device)."""
    if type(x) is np.ndarray:
        return False
    if type(x).__module__.startswith("torch"):  # torch builds its whole CAI dict on hasattr
        return bool(getattr(x, "is_cuda", False))
    if hasattr(x, "__cuda_array_interface__"):
        return True
    dev = getattr(x, "__dlpack_device__", None)
    if dev is not None:
        try:
            return dev()[0] in (KDL_CUDA, KDL_CUDA_MANAGED)
        except Exception:
            return False
    return False


_TORCH_TO_NP: dict = {}


_LIBRARY_OF_TYPE: dict = {}
_TORCH = None


def _torch():
    global _TORCH
    if _TORCH is None:
        import torch
        _TORCH = torch
    return _TORCH


def _library(x) -> str:
    t = type(x)
    lib = _LIBRARY_OF_TYPE.get(t)
    if lib is None:
        lib = _LIBRARY_OF_TYPE[t] = {"torch": "torch", "cupy": "cupy"}.get(t.__module__.split(".")[0], "cai")
    return lib


def view(x, i: int, dl_stream: int | None = None) -> DeviceView:
    """Describe device operand ``i`` without copying it (``dl_stream``: the consumer stream
    handed to a DLPack producer, which orders its pending work before it)."""
    lib = _library(x)
    if lib == "torch":
        dt = _TORCH_TO_NP.get(x.dtype)
        if dt is None:
            dt = _TORCH_TO_NP[x.dtype] = _np_of_torch(x.dtype, i)
        return DeviceView(x.data_ptr(), tuple(x.shape), tuple(x.stride()), dt, lib, x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        if cai.get("strides") is None:
            from ..plan import row_major
            strides = row_major(shape)
        else:
            if any(s % dt.itemsize for s in cai["strides"]):
                raise EincTypeError(f"operand {i} has strides that are not whole elements")
            strides = tuple(s // dt.itemsize for s in cai["strides"])
        return DeviceView(int(cai["data"][0] or 0), shape, strides, dt, lib, x, cai.get("stream"))
    return _from_dlpack(x, i, dl_stream)


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CODES = {0: "i", 1: "u", 2: "f", 4: "bf", 5: "c", 6: "b"}


def _np_of_torch(tdt, i: int) -> np.dtype:
    name = str(tdt).replace("torch.", "")
    if name == "bfloat16":
        if BFLOAT16 is None:
            raise EincTypeError(f"operand {i} is bfloat16: install ml_dtypes (pip install 'einc[cuda]')")
        return BFLOAT16
    try:
        return np.dtype(name)
    except TypeError:
        raise EincTypeError(f"operand {i} has torch dtype {name}, which einc does not support") from None


def _from_dlpack(x, i: int, stream: int | None) -> DeviceView:
    if stream is None:
        capsule = x.__dlpack__()
    else:
        try:
            capsule = x.__dlpack__(stream=stream)
        except TypeError:  # a producer from before DLPack's stream argument
            capsule = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    addr = get(capsule, b"dltensor")  # DLManagedTensor starts with its DLTensor
    t = _DLTensor.from_address(addr)
    kind = _DL_CODES.get(t.dtype.code)
    if kind is None or t.dtype.lanes != 1:
        raise EincTypeError(f"operand {i}: DLPack dtype code {t.dtype.code} is not supported")
    if kind == "bf":
        if t.dtype.bits != 16 or BFLOAT16 is None:
            raise EincTypeError(f"operand {i}: DLPack bfloat{t.dtype.bits} needs ml_dtypes' bfloat16")
        dt = BFLOAT16
    else:
        dt = np.dtype("bool") if kind == "b" else np.dtype(f"{kind}{t.dtype.bits // 8}")
    shape = tuple(t.shape[d] for d in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[d] for d in range(t.ndim))
    else:
        from ..plan import row_major
        strides = row_major(shape)
    ptr = (t.data or 0) + t.byte_offset
    return DeviceView(ptr, shape, strides, dt, "dlpack", (x, capsule))


def device_views(raw, stream=None):
    """(views, consumer stream handle): a DeviceView per device operand (None for host ones),
    described after the stream is known so DLPack producers can order themselves on it."""
    from .streams import dlpack_stream, handle_of
    views, deferred = [], []
    for i, x in enumerate(raw):
        v = None
        if is_device_array(x):
            if _library(x) == "cai" and getattr(x, "__cuda_array_interface__", None) is None:
                deferred.append(i)
            else:
                v = view(x, i)
        views.append(v)
    handle = handle_of(stream) if stream is not None else current_stream([v for v in views if v is not None])
    for i in deferred:
        views[i] = _from_dlpack(raw[i], i, dlpack_stream(handle))
    return views, handle


def torch_stream(v: DeviceView) -> int:
    """torch's current stream on a torch view's device: where torch ordered its producer."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(v.owner.device.index or 0)
    return torch.cuda.current_stream(v.owner.device).cuda_stream


def current_stream(views) -> int:
    """The caller's current stream: torch's or CuPy's for their arrays, else the legacy 0."""
    for v in views:
        if v.library == "torch":
            return torch_stream(v)  # ~0.3 µs through the raw getter, vs ~10 µs
        if v.library == "cupy":
            import cupy
            return cupy.cuda.get_current_stream().ptr
    for v in views:
        if v.stream not in (None, 1, 2):
            return v.stream
    return 0


_TORCH_DTYPES = {"bool": "bool", "int8": "int8", "uint8": "uint8", "int16": "int16", "int32": "int32",
                 "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
                 "complex64": "complex64", "complex128": "complex128", "bfloat16": "bfloat16"}


_TORCH_OF_NP: dict = {}


def torch_dtype(dtype: np.dtype):
    """The torch dtype for a numpy dtype einc supports."""
    tdt = _TORCH_OF_NP.get(dtype)
    if tdt is None:
        tdt = _TORCH_OF_NP[dtype] = getattr(_torch(), _TORCH_DTYPES[dtype.name])
    return tdt


def empty_like_library(views, shape, dtype: np.dtype, order: str = "C", stream: int | None = None):
    """(array, DeviceView) for a new result in the operands' library, on their device.

    ``stream``: the handle of a stream other than the library's current one that will write
    the result; CuPy then allocates from that stream's pool (the caller marks torch's)."""
    if stream is not None and not any(v.library == "torch" for v in views):
        try:
            import cupy
        except ImportError:
            pass
        else:
            with cupy.cuda.ExternalStream(stream) if stream else cupy.cuda.Stream.null:
                return empty_like_library(views, shape, dtype, order)
    for v in views:
        if v.library == "torch":
            torch = _torch()
            tdt = torch_dtype(dtype)
            if order == "F" and len(shape) > 1:
                t = torch.empty(shape[::-1], dtype=tdt, device=v.owner.device).permute(*range(len(shape) - 1, -1, -1))
                return t, view(t, -1)
            t = torch.empty(shape, dtype=tdt, device=v.owner.device)
            from ..plan import row_major
            return t, DeviceView(t.data_ptr(), tuple(shape), row_major(shape), dtype, "torch", t)
        if v.library == "cupy":
            import cupy
            a = cupy.empty(shape, dtype=dtype, order=order)
            return a, view(a, -1)
    try:
        import cupy
        a = cupy.empty(shape, dtype=dtype, order=order)
        return a, view(a, -1)
    except ImportError:
        import torch
        t = torch.empty(shape, dtype=getattr(torch, _TORCH_DTYPES[dtype.name]), device="cuda")
        return t, view(t, -1)
