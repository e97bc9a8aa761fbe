"""einc as an XLA FFI custom call: the C shim (einc/jax_ffi.c), built and registered.

``target("cuda")`` compiles the shim with the C compiler against the installed jaxlib's
FFI headers (once; the library is cached under ``$EINC_CACHE_DIR/jax``), points its
callback at Python, and registers ``einc_einsum_cuda`` with XLA. A jitted call then
reaches ``_run_cuda`` on XLA's own thread with the device pointers of the operands and
the result, XLA's CUstream and the device ordinal; it looks up (or builds) einc's
CudaExecutable for the call's equation, shapes and dtypes and launches it on that stream:
no copies, no synchronisation. ``target("cpu")`` does the same on host buffers with the
llvmlite backend, writing straight into XLA's output buffer.

>>> import einc.jax_ffi as f
>>> f.target("cpu")
'einc_einsum_cpu'
>>> f.key("ij,jk->ik", (2, 2)) == f.key("ij,jk->ik", (2, 2))
True
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

from . import api
from .autodiff import batched_equation
from .errors import EincError
from .runtime.cache import cache_dir

__all__ = ["target", "key", "build_shim"]

SOURCE = Path(__file__).with_name("jax_ffi.c")
# XLA_FFI_DataType -> numpy dtype (c_api.h)
DTYPES = {1: "bool", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16",
          8: "uint32", 9: "uint64", 10: "float16", 11: "float32", 12: "float64", 15: "complex64",
          18: "complex128"}
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p),
                             ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                             ctypes.POINTER(ctypes.c_int32), ctypes.c_void_p, ctypes.c_int32,
                             ctypes.c_void_p, ctypes.c_int64)
_LOCK = threading.Lock()
_KEYS: dict = {}      # (equation, ranks at trace time) -> key
_CALLS: list = []     # key -> (equation, ranks)
_TARGETS: dict = {}   # platform -> target name, once registered
_KEEP: list = []      # the library and ctypes callbacks, alive as long as the process
_RUNNERS: dict = {}   # platform -> its Python callback (``.prepared``: the runners it built)


def key(equation: str, ranks: tuple) -> int:
    """The int64 attribute a custom call carries: its equation and traced operand ranks."""
    k = (equation, tuple(ranks))
    with _LOCK:
        if k not in _KEYS:
            _KEYS[k] = len(_CALLS)
            _CALLS.append(k)
        return _KEYS[k]


def _compiler() -> str:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return shutil.which(cc)
    raise EincError("einc.jax's XLA FFI target needs a C compiler (cc, gcc or clang; or set CC)")


def build_shim() -> Path:
    """The shim's shared library, compiled now unless a cached copy matches source and headers."""
    import jax.ffi
    include = Path(jax.ffi.include_dir())
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update((include / "xla/ffi/api/c_api.h").read_bytes())
    lib = cache_dir() / "jax" / f"einc_jax_ffi-{h.hexdigest()[:16]}.so"
    if lib.exists():
        return lib
    cc = _compiler()
    lib.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=lib.parent)
    os.close(fd)
    try:
        r = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-std=c11", f"-I{include}", str(SOURCE), "-o", tmp],
                           capture_output=True, text=True)
        if r.returncode:
            raise EincError(f"compiling {SOURCE} failed:\n{r.stderr}")
        os.replace(tmp, lib)  # atomic: a concurrent builder writes the same bytes
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return lib


def _load():
    path = build_shim()
    try:
        return ctypes.CDLL(str(path))
    except OSError:  # a damaged cache entry: rebuild it once
        path.unlink(missing_ok=True)
        return ctypes.CDLL(str(build_shim()))


def target(platform: str) -> str:
    """Register einc's FFI target for ``platform`` ("cpu" or "cuda") once; its name."""
    with _LOCK:
        if platform in _TARGETS:
            return _TARGETS[platform]
        import jax.ffi
        lib = _KEEP[0] if _KEEP else _load()
        if not _KEEP:
            _KEEP.append(lib)
        which, prepare = {"cpu": (0, _prepare_cpu), "cuda": (1, _prepare_cuda)}[platform]
        _RUNNERS[platform] = runner = _guarded(prepare)
        cb = _CALLBACK(runner)
        _KEEP.append(cb)
        lib.einc_set_callback(ctypes.c_int(which), cb)
        name = f"einc_einsum_{platform}"
        handler = getattr(lib, f"einc_ffi_{platform}")
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler), platform=platform.upper()
                                    if platform == "cuda" else "cpu")
        _TARGETS[platform] = name
        return name


def _guarded(prepare):
    """The callback the shim calls: never lets an exception cross into C.

    A call's signature (key, device, dims, ranks, dtypes) maps to a prepared runner, so a
    repeated call costs one lookup before einc's launch."""
    prepared = api._LRU(256)

    def callback(k, n, ptrs, ranks, dims, dtypes, stream, device, err, errlen):
        try:
            rl = ranks[:n]
            sig = (k, device, tuple(dims[:sum(rl)]), tuple(rl), tuple(dtypes[:n]))
            go = prepared.get(sig)
            if go is None:
                go = prepare(*_describe(*sig))
                prepared.put(sig, go)
            go([p or 0 for p in ptrs[:n]], stream)
            return 0
        except BaseException as e:  # noqa: BLE001 - reported through XLA
            msg = f"einc: {type(e).__name__}: {e}".encode()[: errlen - 1] + b"\0"
            ctypes.memmove(err, msg, len(msg))
            return 1
    callback.prepared = prepared
    return callback


def _describe(k, device, flat, ranks, dtypes):
    """(equation, shapes, dtypes, device) of a call; operands first, the result last."""
    shapes, off = [], 0
    for r in ranks:
        shapes.append(tuple(flat[off:off + r]))
        off += r
    equation, traced = _CALLS[k]
    extra = len(shapes[0]) - traced[0] if traced else 0
    if extra:  # vmap (expand_dims) added leading axes to every buffer
        equation = batched_equation(equation, shapes[:-1], extra)
    return equation, shapes, [np.dtype(DTYPES[d]) for d in dtypes], device


def _host(ptr: int, shape, dtype) -> np.ndarray:
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0:
        return np.empty(shape, dtype)
    return np.frombuffer((ctypes.c_char * nbytes).from_address(ptr), dtype).reshape(shape)


def _prepare_cpu(equation, shapes, dtypes, device):
    def go(ptrs, stream):
        arrays = [_host(p, s, d) for p, s, d in zip(ptrs, shapes, dtypes)]
        api.einsum(equation, *arrays[:-1], out=arrays[-1], backend="cpu")
    return go


def _prepare_cuda(equation, shapes, dtypes, device):
    from .execute_cuda import CudaExecutable
    from .runtime.cuda import runtime
    rt = runtime(max(device, 0))
    rt.make_current()
    plan = api.plan_for(equation, shapes[:-1], dtype=list(dtypes[:-1]), backend="cuda")
    if plan.out_dtype != dtypes[-1] or tuple(plan.out_shape) != shapes[-1]:
        raise EincError(f"einc planned {plan.out_shape} {plan.out_dtype} for {equation!r}, "
                        f"XLA allocated {shapes[-1]} {dtypes[-1]}")
    exe = CudaExecutable(plan, rt)

    def go(ptrs, stream):
        rt.make_current()  # XLA's thread: bind the primary context, which XLA uses too
        exe(ptrs[:-1], ptrs[-1], rt.stream(stream or 0))
    go.executable = exe
    return go
