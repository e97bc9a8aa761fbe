"""Builtins that call one CPU loop kernel straight from Python (codegen/llvm/entry.py).

``kernel_builtin(addr, sources, ext, strides, release)`` -> a function ``f(arrays, out)``
that runs the kernel at ``addr`` on ``out`` and ``arrays[sources[j]]``, costing ~0.1 µs
of call instead of ctypes' ~0.8; None where that is not safe here (not CPython, a
free-threaded build, an object layout other than the one the entry reads, a failed self
test) or ``EINC_C_ENTRY=0``: the caller then keeps its ctypes call.
"""
from __future__ import annotations

import ctypes
import os
import sys
import sysconfig
import threading

import numpy as np

METH_FASTCALL = 0x0080
_LOCK = threading.Lock()
_DEFS: dict = {}  # (n_inputs, release) -> PyMethodDef, alive for the process (builtins point at it)
_USABLE = None


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


def _addr(f) -> int:
    return ctypes.cast(f, ctypes.c_void_p).value


def _layout_ok() -> bool:
    """The object fields the entry reads are where it reads them (8-byte words)."""
    if sys.implementation.name != "cpython" or sysconfig.get_config_var("Py_GIL_DISABLED"):
        return False
    word = lambda a: ctypes.c_void_p.from_address(a).value or 0
    x, t, lst = np.arange(3.0)[1:], (object(), object()), [object(), object()]
    return (word(id(t) + 8) == id(tuple) and word(id(t) + 16) == 2 and word(id(t) + 32) == id(t[1])
            and word(id(lst) + 8) == id(list) and word(id(lst) + 16) == 2
            and word(word(id(lst) + 24) + 8) == id(lst[1]) and word(id(x) + 16) == x.ctypes.data)


def _make(addr: int, sources, ext, strides, release: bool):
    from ..codegen.llvm.entry import emit_entry
    from .cpu import jit
    n = len(sources)
    with _LOCK:
        d = _DEFS.get((n, release))
        if d is None:
            meth = jit().get(("py-entry", n, release), lambda: emit_entry(n, release))
            d = _DEFS[(n, release)] = _MethodDef(b"einc_kernel", meth, METH_FASTCALL, None)
    api = ctypes.pythonapi
    ctx = np.array([addr, ctypes.addressof(ext), ctypes.addressof(strides), _addr(api.Py_IncRef), id(None),
                    id(tuple), id(list), _addr(api.PyEval_SaveThread), _addr(api.PyEval_RestoreThread),
                    _addr(api.PyErr_SetString), ctypes.c_void_p.in_dll(api, "PyExc_TypeError").value,
                    *sources], dtype=np.int64)
    new = api.PyCFunction_NewEx
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]
    return new(ctypes.addressof(d), (ctx, ext, strides, d), None)  # self keeps the tables alive


def _self_test() -> bool:
    """Both arities on real loop kernels (a sum, a product), tuples and lists, and the error path."""
    from ..codegen.llvm.loops import LoopNestKey, emit_loops
    from .cpu import jit
    f8 = "float64"
    one = LoopNestKey((f8,), f8, f8, ("s",), "register", (0, 1))
    two = LoopNestKey((f8, f8), f8, f8, ("f",), "register", (1, 1, 1))
    x, y = np.arange(5.0), np.arange(5.0) + 1
    ext = (ctypes.c_int64 * 1)(5)
    s1, s2 = (ctypes.c_int64 * 2)(0, 1), (ctypes.c_int64 * 3)(1, 1, 1)
    for release in (False, True):
        f = _make(jit().get(one, lambda: emit_loops(one)), [1], ext, s1, release)
        out = np.zeros(())
        f((y, x), out)
        if out[()] != 10.0:
            return False
        g = _make(jit().get(two, lambda: emit_loops(two)), [0, 1], ext, s2, release)
        out = np.zeros(5)
        g([x, y], out)
        if not np.array_equal(out, x * y):
            return False
        for bad in ((1,), ((x,), out), ((x, y),)):
            try:
                g(*bad)
                return False
            except TypeError:
                pass
    return True


def usable() -> bool:
    global _USABLE
    if _USABLE is None:
        try:
            _USABLE = os.environ.get("EINC_C_ENTRY", "1") != "0" and _layout_ok() and _self_test()
        except Exception:  # no pythonapi symbol, a compile failure: keep ctypes
            _USABLE = False
    return _USABLE


def kernel_builtin(addr: int, sources, ext, strides, release: bool):
    """f(arrays, out) running the loop kernel at ``addr``, or None (see the module doc)."""
    if not usable():
        return None
    return _make(addr, list(sources), ext, strides, release)
