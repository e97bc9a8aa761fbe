"""Traces and diagonals on the CPU, and the builtin entry the cached loop kernels are called
through (einc/runtime/pyentry.py, einc/codegen/llvm/entry.py), against numpy.

Every einsum runs twice: the planning call and the cached call, which goes through the
builtin. Covers ragged sizes (remainders of the 4-way unrolled strided sum), strided,
transposed, sliced and negative-stride diagonals, zero sizes, int/uint/bool/complex
dtypes, diagonals written out (``out=``, ``dtype=``: a kernel, not a view), and the
builtin's own contract: tuples and lists, bad arguments, the GIL released for long
kernels, and the ctypes fallback (``EINC_C_ENTRY=0``).
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import einc
from einc import api
from einc.runtime import pyentry
from oracle import assert_matches, random_operand, twice

rng = np.random.default_rng(11)
DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128, np.bool_]


def rand(shape, dtype):
    return random_operand(rng, shape, dtype, 9)


def executable(subs, *ops):
    sig = tuple(x for a in ops for x in (a.shape, a.strides, a.dtype))
    return api._FAST.get((subs,) + sig)


VIEWS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "fortran": np.asfortranarray,
    "sliced": lambda a: a[1:-1, 2:],
    "every_other": lambda a: a[::2, ::3],
    "negative": lambda a: a[::-1, ::-1],
    "anti": lambda a: a[:, ::-1],
    "column_of_3d": lambda a: np.stack([a, a + 1], axis=2)[:, :, 1],
}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64])
def test_trace_of_views(view, dtype):
    """`ii->` on non-contiguous diagonals: the kernel walks stride s0 + s1, whatever they are."""
    a = VIEWS[view](rand((23, 29), dtype))
    a = a[: min(a.shape), : min(a.shape)]
    assert_matches(twice("ii->", a), "ii->", a, terms=a.shape[0])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 63, 64, 65, 1000])
@pytest.mark.parametrize("dtype", DTYPES)
def test_trace_ragged(n, dtype):
    a = rand((n, n), dtype)
    got = twice("ii->", a)
    assert_matches(got, "ii->", a, terms=n)
    assert np.ndim(got) == 0
    if n != 1:  # n = 1: see test_size_one_trace_is_a_scalar
        assert type(got) is type(np.einsum("ii->", a))


@pytest.mark.parametrize("subs,shape", [("ii->", (1, 1)), ("ij->", (1, 1)), ("i->", (1,)), ("...->", ())])
def test_size_one_reductions_are_scalars(subs, shape):
    """A sum over extents of 1 is a relabelling, but a 0-d result is numpy's scalar, not a view."""
    a = np.full(shape, 2.5)
    for _ in range(2):  # first call and the cached one
        got, want = einc.einsum(subs, a), np.einsum(subs, a)
        assert type(got) is type(want) and got == want


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.complex128])
def test_big_trace_cached_path(dtype):
    """2896 x 2896 (32 MiB in fp32): every diagonal element on its own page."""
    a = rand((2896, 2896), dtype) if np.dtype(dtype).itemsize <= 4 else rand((1500, 1500), dtype)
    assert_matches(twice("ii->", a), "ii->", a, terms=a.shape[0])
    assert isinstance(executable("ii->", a).fast, type(len)) == pyentry.usable()


@pytest.mark.parametrize("subs,shape", [
    ("iij->j", (7, 7, 5)), ("jii->j", (5, 7, 7)), ("iji->j", (6, 4, 6)), ("iii->", (9, 9, 9)),
    ("iii->i", (9, 9, 9)), ("iijj->", (5, 5, 6, 6)), ("ijij->", (4, 3, 4, 3)), ("ijji->ij", (3, 5, 5, 3)),
])
@pytest.mark.parametrize("dtype", [np.int16, np.float64, np.complex64])
def test_partial_and_multiple_diagonals(subs, shape, dtype):
    a = rand(shape, dtype)
    for x in (a, np.asfortranarray(a), a[::-1]):
        assert_matches(twice(subs, x), subs, x, terms=max(shape) ** 2)


@pytest.mark.parametrize("subs,shapes", [
    ("ii,i->i", [(13, 13), (13,)]), ("ii,ii->", [(17, 17), (17, 17)]), ("ii,i->", [(31, 31), (31,)]),
    ("ij,jj->i", [(6, 11), (11, 11)]), ("ii,jj->ij", [(5, 5), (4, 4)]),
])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex128])
def test_diagonal_with_another_operand(subs, shapes, dtype):
    ops = [rand(s, dtype) for s in shapes]
    assert_matches(twice(subs, *ops), subs, *ops, terms=max(max(s) for s in shapes))
    ops = [o.T.copy().T for o in ops]  # Fortran order: every diagonal stride transposed
    assert_matches(twice(subs, *ops), subs, *ops, terms=max(max(s) for s in shapes))


@pytest.mark.parametrize("view", ["contiguous", "transposed", "sliced", "negative"])
@pytest.mark.parametrize("dtype", [np.int8, np.float64, np.complex64])
def test_diagonal_written_out(view, dtype):
    """`ii->i` with out= or dtype= copies the diagonal through a kernel (no view)."""
    a = VIEWS[view](rand((19, 19), dtype))
    a = a[: min(a.shape), : min(a.shape)]
    n = a.shape[0]
    out = np.full(n, 7, dtype=dtype)
    for _ in range(2):
        r = einc.einsum("ii->i", a, out=out)
        assert r is out or np.shares_memory(r, out)
        np.testing.assert_array_equal(out, np.einsum("ii->i", a))
    strided_out = np.zeros(2 * n, dtype=dtype)[::2]
    einc.einsum("ii->i", a, out=strided_out)
    np.testing.assert_array_equal(strided_out, np.einsum("ii->i", a))
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    got = twice("ii->i", a, dtype=wide)
    assert got.dtype == wide and not np.shares_memory(got, a)
    np.testing.assert_array_equal(got, np.einsum("ii->i", a).astype(wide))


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (5, 5)])
@pytest.mark.parametrize("subs", ["ii->i", "ii->"])
def test_zero_and_tiny(subs, shape):
    for dtype in (np.int64, np.float32, np.complex64):
        a = rand(shape, dtype)
        assert_matches(twice(subs, a), subs, a, terms=max(1, shape[0]))


def test_row_dot_and_hadamard_through_the_builtin():
    """Two-input loop kernels: ragged and strided operands, int and complex."""
    for dtype in (np.int32, np.complex64, np.float64):
        base = rand((37, 2 * 45), dtype)
        a, b = base[:, ::2], base[:, 1::2]
        for subs in ("ij,ij->i", "ij,ij->ij", "ij,ji->i"):
            y = b if subs != "ij,ji->i" else np.ascontiguousarray(b.T)
            assert_matches(twice(subs, a, y), subs, a, y, terms=45)


# ---------------------------------------------------------------------- the builtin entry
needs_entry = pytest.mark.skipif(not pyentry.usable(), reason="builtin entry not usable here (ctypes fallback)")


@needs_entry
def test_builtin_rejects_bad_arguments():
    a = rand((6, 6), np.float64)
    einc.einsum("ii->", a)
    f = executable("ii->", a).fast
    assert isinstance(f, type(len))
    out = np.zeros(())
    f((a,), out)
    assert np.isclose(out[()], np.trace(a), rtol=1e-13)
    out[()] = 0
    f([a], out)
    assert np.isclose(out[()], np.trace(a), rtol=1e-13)
    for bad in [(), ((a,),), ((), out), ([], out), (a, out), (7, out), ((a,), out, 1)]:
        with pytest.raises(TypeError):
            f(*bad)


@needs_entry
def test_builtin_sources_follow_operand_order():
    """`ij,jk->ik` 3x3: the kernel's operand order vs the call's (both swapped)."""
    a, b = rand((3, 4), np.float64), rand((4, 5), np.float64)
    for x, y, subs in ((a, b, "ij,jk->ik"), (b, a, "jk,ij->ik")):
        assert_matches(twice(subs, x, y), subs, x, y, terms=4)


@needs_entry
def test_long_builtin_kernel_releases_the_gil():
    """A kernel of >= ENTRY_NOGIL_MIN points lets another Python thread run meanwhile."""
    a = rand((3000, 3000), np.float64)
    subs = "ij->j"  # a column sum: one thread, one loop kernel (the direct path)
    einc.einsum(subs, a)
    ex = executable(subs, a)
    if ex is None or not isinstance(ex.fast, type(len)):
        pytest.skip("this plan does not take the direct path")
    ticks, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1
    t = threading.Thread(target=spin, daemon=True)
    t.start()
    time.sleep(0.01)
    out = np.empty(3000)
    before, t0 = ticks[0], time.perf_counter()
    while time.perf_counter() - t0 < 0.2:
        ex.fast((a,), out)
    during = ticks[0] - before
    stop.set()
    t.join(5)
    np.testing.assert_allclose(out, a.sum(axis=0), rtol=1e-12, atol=1e-9)
    assert during > 1000  # the spinner ran while the kernels did


def test_ctypes_fallback_gives_the_same_answers():
    """EINC_C_ENTRY=0 keeps the ctypes call (as where the entry's layout check fails)."""
    code = ("import numpy as np, einc; from einc.runtime import pyentry; assert not pyentry.usable();"
            "a = np.arange(49.0).reshape(7, 7)[::-1];"
            "r = [float(einc.einsum('ii->', a)) for _ in range(2)];"
            "d = [einc.einsum('ii,i->i', a, np.arange(7.0)) for _ in range(2)];"
            "assert r == [float(np.einsum('ii->', a))] * 2, r;"
            "assert all((x == np.einsum('ii,i->i', a, np.arange(7.0))).all() for x in d); print('ok')")
    env = dict(os.environ, EINC_C_ENTRY="0")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr


def test_executable_keeps_working_after_its_arrays_go():
    """The builtin's tables live in its own self: the Executable's arrays may be collected."""
    a = rand((9, 9), np.float32)
    einc.einsum("ii->", a)
    f = executable("ii->", a).fast
    api._FAST.clear()
    api._EXECUTABLES.clear()
    gc.collect()
    out = np.zeros((), np.float32)
    f((a,), out)
    assert abs(out[()] - np.trace(a)) < 1e-4
