"""The bandwidth-bound steps (`reduce`): row-dots, traces, diagonals, Hadamard products and
permutations, each against numpy, on the first (planning) call and on the cached fast
path. Covers ragged sizes, strided and transposed inputs, K = 0 and empty dimensions, the
unrolled strided sum (remainders 0-3), the threaded split, and the cheap view path."""
from __future__ import annotations

import numpy as np
import pytest

import einc
from einc import execute
from oracle import assert_matches, random_operand, twice

rng = np.random.default_rng(7)
DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.int16, np.float32, np.float64, np.complex64, np.complex128, np.bool_]


def rand(shape, dtype):
    return random_operand(rng, shape, dtype, 50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 258])
def test_trace_sizes_and_dtypes(n, dtype):
    """`ii->` walks the diagonal with stride n+1: unrolled partial sums plus a remainder."""
    a = rand((n, n), dtype)
    assert_matches(twice("ii->", a), "ii->", a, terms=n)


@pytest.mark.parametrize("view", ["strided", "transposed", "fortran", "negative"])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.complex128])
def test_trace_of_views(view, dtype):
    base = rand((41, 41), dtype)
    a = {"strided": base[::2, ::2], "transposed": base.T, "fortran": np.asfortranarray(base),
         "negative": base[::-1, ::-1]}[view]
    assert_matches(twice("ii->", a), "ii->", a, terms=a.shape[0])


@pytest.mark.parametrize("subs,shape", [("iij->j", (9, 9, 5)), ("jii->j", (5, 9, 9)),
                                        ("ijij->ij", (3, 4, 3, 4)), ("ij->i", (6, 7))])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_strided_sums(subs, shape, dtype):
    """Other steps whose innermost sum is strided (partial diagonals; a transposed row sum)."""
    a = rand(shape, dtype)
    for x in (a, np.asfortranarray(a)):
        assert_matches(twice(subs, x), subs, x, terms=max(shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 13), (1, 1), (5, 0), (0, 5), (3, 1031), (2100, 517)])
def test_row_dot(shape, dtype):
    """`ij,ij->i` (K = 0 gives zeros, M = 0 an empty result; 2100x517 runs threaded)."""
    a, b = rand(shape, dtype), rand(shape, dtype)
    assert_matches(twice("ij,ij->i", a, b), "ij,ij->i", a, b, terms=shape[1])


@pytest.mark.parametrize("layout", ["strided", "transposed", "mixed", "broadcast"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_row_dot_strided(layout, dtype):
    base_a, base_b = rand((2 * 1200, 3 * 700), dtype), rand((700, 1200), dtype)
    a = base_a[::2, ::3]
    b = {"strided": base_a[1::2, 1::3], "transposed": base_b.T, "mixed": np.ascontiguousarray(a[:, ::-1]),
         "broadcast": np.broadcast_to(base_b[0, :700], (1200, 700))}[layout]
    assert_matches(twice("ij,ij->i", a, b), "ij,ij->i", a, b, terms=700)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 9), (0, 4), (4, 0), (1031, 1025)])
def test_hadamard(shape, dtype):
    """`ij,ij->ij` (1031x1025: over execute.LOOP_PARALLEL_MIN points, split across threads)."""
    a, b = rand(shape, dtype), rand(shape, dtype)
    assert_matches(twice("ij,ij->ij", a, b), "ij,ij->ij", a, b)


def test_hadamard_threaded_split_covers_every_row(monkeypatch):
    """An odd row count split over 3 threads (ragged parts) leaves no row unwritten."""
    monkeypatch.setenv("EINC_NUM_THREADS", "3")
    monkeypatch.setattr(execute, "_POOL", None)
    a, b = rand((1025, 1031), np.float64), rand((1025, 1031), np.float64)
    out = np.full((1025, 1031), np.nan)
    einc.einsum("ij,ij->ij", a, b, out=out, optimize="greedy")
    assert_matches(out, "ij,ij->ij", a, b)
    monkeypatch.setattr(execute, "_POOL", None)


@pytest.mark.parametrize("layout", ["strided", "transposed", "fortran_out"])
@pytest.mark.parametrize("dtype", [np.int16, np.float64])
def test_hadamard_layouts(layout, dtype):
    a, b = rand((1100, 1000), dtype), rand((1000, 1100), dtype)
    if layout == "strided":
        x, y = a[::2, :999:3], a[1::2, 1::3]
    elif layout == "transposed":
        x, y = a, b.T
    else:
        x, y = a, np.ascontiguousarray(b.T)
    got = twice("ij,ij->ij", x, y)
    assert_matches(got, "ij,ij->ij", x, y)
    out = np.zeros(x.shape, dtype=got.dtype, order="F")
    einc.einsum("ij,ij->ij", x, y, out=out)
    assert_matches(out, "ij,ij->ij", x, y)


@pytest.mark.parametrize("subs,shape,make", [
    ("ii->i", (6, 6), lambda a: a),
    ("ii->i", (6, 6), np.asfortranarray),
    ("ii->i", (12, 12), lambda a: a[::2, ::2]),
    ("ii->i", (0, 0), lambda a: a),
    ("ii->i", (1, 1), lambda a: a),
    ("ij->ji", (3, 4), lambda a: a),
    ("ijk->kij", (2, 3, 4), lambda a: a),
    ("ijk->kij", (2, 3, 4), np.asfortranarray),
    ("iij->ji", (3, 3, 2), lambda a: a),
    ("ij->ij", (3, 4), lambda a: a.T),
])
def test_relabelling_is_a_view_like_numpys(subs, shape, make):
    """A pure relabelling returns a view with numpy's shape, strides and writeability."""
    a = make(rand(shape, np.float64))
    ref = np.einsum(subs, a)
    for _ in range(2):  # planning call, then the cached fast path
        got = einc.einsum(subs, a)
        assert got.shape == ref.shape and got.strides == ref.strides
        np.testing.assert_array_equal(got, ref)
        assert got.flags.writeable == ref.flags.writeable
        if a.size:
            assert np.shares_memory(got, a)
            got.flat[0] = 123.0  # writes through to the operand, as numpy's view does
            assert ref.flat[0] == 123.0


def test_readonly_operand_gives_readonly_view():
    a = rand((5, 5), np.float64)
    a.flags.writeable = False
    for _ in range(2):
        got = einc.einsum("ii->i", a)
        assert not got.flags.writeable
        np.testing.assert_array_equal(got, np.einsum("ii->i", a))


def test_cached_call_tells_byte_orders_apart():
    """`>f8` and `<f8` share the dtype char `d`: the call cache must not mix them up."""
    a = np.arange(6.0).reshape(2, 3)
    assert_matches(einc.einsum("ij->i", a), "ij->i", a)
    swapped = a.astype(a.dtype.newbyteorder())
    with pytest.raises(einc.EincError):
        einc.einsum("ij->i", swapped)
