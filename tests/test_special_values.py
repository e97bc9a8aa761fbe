"""Special values on the CPU backend, against numpy.einsum, for every kernel family.

NaN, ±inf and -0.0 (real and complex), float32/float64 subnormals (flush-to-zero would be
a bug), and integer wrap-around (einc must give numpy's wrapped result exactly). The
differences from numpy that are principled are in docs/reliability.md; each is pinned here.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import einc
from einc.api import _build, plan_for
from einc.parse import parse

# (name, subscripts, shapes, the strategy einc picks for float64 operands)
CASES = [
    ("gemm-gett", "ij,jk->ik", [(70, 70), (70, 70)], "gett"),
    ("batched", "bij,bjk->bik", [(3, 9, 9), (3, 9, 9)], "reduce"),
    ("small-gemm", "ij,jk->ik", [(5, 7), (7, 6)], "reduce"),
    ("row-dot", "ij,ij->i", [(20, 30), (20, 30)], "reduce"),
    ("dot", "i,i->", [(100,), (100,)], "reduce"),
    ("trace", "ii->", [(30, 30)], "reduce"),
    ("hadamard", "ij,ij->ij", [(20, 30), (20, 30)], "reduce"),
    ("column-sums", "ij->j", [(20, 30)], "reduce"),
    ("total", "ij->", [(20, 30)], "reduce"),
    ("permutation", "ijk->kji", [(4, 5, 6)], "reduce"),  # run with out= (else numpy and einc return views)
]
IDS = [c[0] for c in CASES]
STRATEGIES = [None, "generic"]


def _rng(*names):
    """A generator seeded by the case's names (str hashes change between processes)."""
    return np.random.default_rng(zlib.crc32(" ".join(names).encode()))


def _out(subscripts, ops, dtype=None):
    """An out= for the permutation case, so that a kernel, not a view, makes the answer."""
    if subscripts != "ijk->kji":
        return {}
    return {"out": np.empty(ops[0].shape[::-1], dtype or ops[0].dtype)}


def _run(subscripts, ops, strategy, **kw):
    with np.errstate(all="ignore"):
        return einc.einsum(subscripts, *ops, strategy=strategy, **_out(subscripts, ops), **kw)


def _numpy(subscripts, ops, optimize, **kw):
    """numpy's answer, into an out= where einc is given one (numpy's view keeps -0.0, its
    kernels, like einc's, sum into +0.0)."""
    with np.errstate(all="ignore"):
        return np.asarray(np.einsum(subscripts, *ops, optimize=optimize, **_out(subscripts, ops), **kw))


@pytest.mark.parametrize("name,subscripts,shapes,strategy", CASES, ids=IDS)
def test_cases_hit_the_kernel_family_they_name(name, subscripts, shapes, strategy):
    for dtype in ("float32", "float64"):
        assert [s.strategy for s in plan_for(subscripts, shapes, dtype).steps] == [strategy]


# ------------------------------------------------------------------ NaN, inf, -0.0

def _sprinkled(rng, shape, dtype, specials=(np.nan, np.inf, -np.inf, -0.0), frac=0.03):
    """Small integers (so every finite sum is exact) with a few special values; a square
    operand gets one on its diagonal too (the trace reads nothing else)."""
    a = rng.integers(-3, 4, shape).astype(np.float64)
    flat = a.reshape(-1)
    idx = rng.choice(flat.size, max(1, int(flat.size * frac)), replace=False)
    flat[idx] = rng.choice(specials, len(idx))
    if len(shape) == 2 and shape[0] == shape[1]:
        a[1, 1] = specials[0]
    return a.astype(dtype)


SPECIALS = {"nan-inf-negzero": (np.nan, np.inf, -np.inf, -0.0), "inf-negzero": (np.inf, -0.0)}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("specials", SPECIALS)
@pytest.mark.parametrize("name,subscripts,shapes,_", CASES, ids=IDS)
def test_nan_inf_and_negative_zero(name, subscripts, shapes, _, specials, dtype, strategy):
    rng = _rng(name, specials, dtype)
    ops = [_sprinkled(rng, s, dtype, SPECIALS[specials]) for s in shapes]
    if name == "permutation":  # mostly zeros of both signs
        ops = [_sprinkled(rng, shapes[0], dtype, (-0.0, np.nan, np.inf, -np.inf, 0.0), frac=0.9)]
    got = np.asarray(_run(subscripts, ops, strategy))
    wide = [o.astype(np.float64) for o in ops]
    ref = _numpy(subscripts, wide, True)  # numpy's answer in float64; every finite value is exact
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got, ref.astype(dtype))  # inf with its sign, finite exactly
    assert not np.isfinite(ref).all()  # special values really reach the result
    # The sign of a zero: where numpy's two paths agree (its loop nest and optimize=True),
    # einc agrees with them. (They disagree for Hadamard products: docs/reliability.md.)
    loop = _numpy(subscripts, wide, False)
    zero = (ref == 0) & (np.signbit(ref) == np.signbit(loop))
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(ref[zero]))


@pytest.mark.parametrize("subscripts,shape", [("ii->i", (3, 3)), ("ij->ji", (2, 3)), ("ijk->kji", (2, 3, 4))])
def test_views_keep_negative_zero(subscripts, shape):
    # a sum-free single-operand einsum is a view of the operand in numpy and in einc
    a = np.full(shape, -0.0)
    got = einc.einsum(subscripts, a)
    assert np.shares_memory(got, a) and np.signbit(got).all() and np.signbit(np.einsum(subscripts, a)).all()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hadamard_zero_sign_follows_numpys_loop_nest(dtype, strategy):
    # numpy.einsum's default (its loop nest) adds the product to a zeroed output: +0.0;
    # optimize=True calls multiply and keeps -0.0. einc gives the default's answer.
    a, b = np.full((4, 5), -0.0, dtype), np.ones((4, 5), dtype)
    got = einc.einsum("ij,ij->ij", a, b, strategy=strategy)
    assert not np.signbit(np.einsum("ij,ij->ij", a, b)).any()
    assert np.signbit(np.einsum("ij,ij->ij", a, b, optimize=True)).all()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.einsum("ij,ij->ij", a, b)))


def _complex_sprinkled(rng, shape, dtype):
    a = rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)
    flat = a.reshape(-1)
    parts = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
    for i in rng.choice(flat.size, max(1, flat.size // 30), replace=False):
        flat[i] = complex(rng.choice(parts), rng.choice(parts))
    if len(shape) == 2 and shape[0] == shape[1]:
        a[1, 1] = complex(np.inf, np.nan)
    return a.astype(dtype)


def _assert_same_parts(got, ref):
    for g, r in ((got.real, ref.real), (got.imag, ref.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(r))
        np.testing.assert_array_equal(g, r)


COMPLEX_CASES = [c for c in CASES if c[0] != "gemm-gett"]  # that one: the xfail below


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name,subscripts,shapes,_", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_inf_and_nan_parts(name, subscripts, shapes, _, dtype, strategy):
    # The oracle is numpy's loop nest: numpy's optimize=True sends complex contractions
    # to BLAS, whose complex products make NaN where the plain formula gives inf
    # (docs/reliability.md); every finite part here is a small integer, so exact.
    rng = _rng(name, dtype)
    ops = [_complex_sprinkled(rng, s, dtype) for s in shapes]
    got = np.asarray(_run(subscripts, ops, strategy))
    ref = _numpy(subscripts, [o.astype(np.complex128) for o in ops], False).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    _assert_same_parts(got, ref)
    assert not (np.isfinite(ref.real).all() and np.isfinite(ref.imag).all())


def test_complex_gemm_as_real_gemm_keeps_inf():
    # (the real GEMM's matrix [[B_re, B_im], [-B_im, B_re]] is built by copies and a sign
    # flip; built by multiplying with a constant 0/+-1 tensor, inf * 0 made the real part NaN)
    a, b = np.ones((70, 70), complex), np.ones((70, 70), complex)
    b[3, 5] = complex(np.inf, 0)  # numpy's loop nest: (1+0j)(inf+0j) = inf + nan j
    got = einc.einsum("ij,jk->ik", a, b)
    _assert_same_parts(got, np.einsum("ij,jk->ik", a, b))


# ------------------------------------------------------------------ subnormals

@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("mode", ["subnormal-inputs", "subnormal-products"])
@pytest.mark.parametrize("name,subscripts,shapes,_", CASES, ids=IDS)
def test_subnormals_are_not_flushed(name, subscripts, shapes, _, mode, dtype, strategy):
    if mode == "subnormal-products" and len(shapes) == 1:
        pytest.skip("one operand: no products")
    # Subnormal inputs times small integers, or normal inputs whose products are
    # subnormal: every product and sum is exact on the subnormal grid, so einc must give
    # numpy's answer bit for bit; flush-to-zero (or denormals-are-zero) gives zeros.
    real = np.float32 if dtype in ("float32", "complex64") else np.float64
    tiny = np.finfo(real).smallest_subnormal
    scale = 2.0**-70 if real is np.float32 else 2.0**-530  # a product of two: subnormal
    rng = _rng(name, mode, dtype)
    ops = []
    for n, s in enumerate(shapes):
        k = rng.integers(-20, 21, s) + (1j * rng.integers(-20, 21, s) if dtype.startswith("complex") else 0)
        ops.append((k * (tiny if n == 0 else 1) if mode == "subnormal-inputs" else k * scale).astype(dtype))
    got = np.asarray(_run(subscripts, ops, strategy))
    ref = _numpy(subscripts, ops, False)
    np.testing.assert_array_equal(got, ref)
    assert got.dtype == np.dtype(dtype)
    parts = np.abs(np.concatenate([ref.real.ravel(), ref.imag.ravel()]))
    assert ((parts > 0) & (parts < np.finfo(real).tiny)).any()  # really subnormal results


# ------------------------------------------------------------------ integer wrap-around

INTS = ["int8", "int16", "int32", "int64", "uint8"]


def _near_limits(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name,subscripts,shapes,_", CASES, ids=IDS)
def test_integer_sums_and_products_wrap_as_numpys(name, subscripts, shapes, _, dtype, strategy):
    rng = _rng(name, dtype)
    ops = [_near_limits(rng, s, dtype) for s in shapes]
    got = np.asarray(_run(subscripts, ops, strategy))
    ref = _numpy(subscripts, ops, True)
    np.testing.assert_array_equal(got, ref)
    assert got.dtype == ref.dtype
    exact = _numpy(subscripts, [o.astype(object) for o in ops], False)  # Python ints: no wrap
    if name != "permutation":
        assert (exact != ref.astype(object)).any()  # the case really wraps


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("result", [None, "int16", "int32"])
def test_small_int_gemm_wraps_as_numpys(dtype, result):
    # The packed gett with an int32 accumulator: with dtype="int32" it must wrap where
    # numpy's int32 sums wrap (K = 140000 products of 127*127 pass 2**31), and a plain
    # int8/uint8 or int16 result is that sum's low bits.
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    m, k = (8, 140000) if result == "int32" else (70, 70)
    a = rng.integers(info.max - 3, info.max, (m, k), endpoint=True).astype(dtype)
    b = rng.integers(info.max - 3, info.max, (k, m), endpoint=True).astype(dtype)
    if dtype == "int8":
        b[:, ::2] = info.min
    kw = {} if result is None else {"dtype": result}
    steps = _build(parse("ij,jk->ik"), [a, b], None, result, "K", "safe", "auto", None, None, compile=False).steps
    assert [s.strategy for s in steps] == ["gett"]
    got = einc.einsum("ij,jk->ik", a, b, **kw)
    ref = _numpy("ij,jk->ik", [a, b], True, **kw)
    np.testing.assert_array_equal(got, ref)
    assert got.dtype == ref.dtype
    exact = a.astype(np.int64) @ b.astype(np.int64)
    assert (exact != ref).any()  # the result type's range was really exceeded


def test_int64_products_wrap():
    a = np.array([2**62 + 3, -(2**62), 2**40], np.int64)
    b = np.array([4, 3, 2**30], np.int64)
    for s in ("i,i->", "i,i->i"):
        for strategy in STRATEGIES:
            np.testing.assert_array_equal(einc.einsum(s, a, b, strategy=strategy), np.einsum(s, a, b))
