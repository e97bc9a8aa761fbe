"""einc as an array backend: einc.tensordot / einc.transpose against numpy's, and
opt_einsum (backend="einc", constants=) and cotengra (implementation=) running on einc.

"numpy is the oracle, never the engine": the tests that count calls also replace
numpy's einsum / tensordot / dot / matmul with functions that fail, so a result that
still matches was computed by einc's kernels.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
import opt_einsum
import pytest

import einc

RNG = np.random.default_rng(7)


def _rand(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == bool:
        return np.asarray(RNG.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(RNG.integers(-5 if dtype.kind == "i" else 0, 6, size=shape).astype(dtype))
    x = np.asarray(RNG.standard_normal(shape))
    if dtype.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return np.asarray(x.astype(dtype))


def _close(got, ref, terms):
    """``got`` equals numpy's ``ref``: exactly for int/bool, else to eps * terms."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if ref.dtype.kind in "biu":
        np.testing.assert_array_equal(got, ref)
        return
    eps = np.finfo(ref.dtype).eps
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    np.testing.assert_allclose(got, ref, rtol=0, atol=8 * eps * max(terms, 1) * scale)


@contextlib.contextmanager
def numpy_refuses():
    """numpy's contraction entry points fail inside the block."""
    def refuse(*a, **k):
        raise AssertionError("numpy was asked to compute a contraction")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("einsum", "tensordot", "dot", "matmul", "inner", "vdot"):
            mp.setattr(np, name, refuse)
        yield


@pytest.fixture
def numpy_cannot_compute():
    """numpy's contraction entry points fail while the test runs."""
    with numpy_refuses():
        yield


# ---------------------------------------------------------------- tensordot

TENSORDOT_CASES = [
    # (name, shape a, shape b, axes)
    ("matmul axes=1", (5, 7), (7, 3), 1),
    ("default axes=2", (4, 5, 6), (5, 6, 3), 2),
    ("outer axes=0", (3, 4), (2, 5), 0),
    ("full contraction to a 0-d array", (3, 4, 5), (3, 4, 5), 3),
    ("pair of sequences, permuted", (3, 4, 5), (5, 2, 4), ([1, 2], [2, 0])),
    ("pair of ints", (6, 4), (3, 6), (0, 1)),
    ("negative axes", (3, 4, 5), (5, 4, 2), ([-1, -2], [0, 1])),
    ("empty pair is an outer product", (2, 3), (4,), ((), ())),
    ("K = 0 gives zeros", (3, 0), (0, 4), 1),
    ("empty free dimension", (0, 5), (5, 3), 1),
    ("vector dot", (17,), (17,), 1),
    ("batch-like 4-d", (2, 3, 4, 5), (4, 3, 6), ([1, 2], [1, 0])),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int32", "int8", "bool"])
@pytest.mark.parametrize("name,sa,sb,axes", TENSORDOT_CASES, ids=[c[0] for c in TENSORDOT_CASES])
def test_tensordot_matches_numpy(name, sa, sb, axes, dtype):
    a, b = _rand(sa, dtype), _rand(sb, dtype)
    got = einc.tensordot(a, b, axes)
    ref = np.tensordot(a, b, axes)
    assert type(got) is np.ndarray  # 0-d results too, as numpy's
    k = math.prod(sa) // max(1, math.prod(ref.shape[:len(sa)])) if ref.ndim else math.prod(sa)
    _close(got, ref, k)


def test_tensordot_default_axes_and_keyword():
    a, b = _rand((3, 4, 5), "float64"), _rand((4, 5, 2), "float64")
    _close(einc.tensordot(a, b), np.tensordot(a, b), 20)
    _close(einc.tensordot(a, b, axes=([1, 2], [0, 1])), np.tensordot(a, b, axes=([1, 2], [0, 1])), 20)


def test_tensordot_strided_and_mixed_dtype_operands():
    base = _rand((8, 10, 6), "float64")
    a = base[::2, 1:, ::-1].transpose(2, 0, 1)  # (6, 4, 9), every stride odd
    b = _rand((9, 6, 3), "float32")[:, :, ::2]  # (9, 6, 2)
    ref = np.tensordot(a, b, ([0, 2], [1, 0]))
    got = einc.tensordot(a, b, ([0, 2], [1, 0]))
    _close(got, ref, 54)
    assert got.dtype == np.float64


def test_tensordot_array_likes():
    _close(einc.tensordot([[1, 2], [3, 4]], [5, 6], 1), np.tensordot([[1, 2], [3, 4]], [5, 6], 1), 2)


def test_tensordot_does_not_use_numpy(numpy_cannot_compute):
    a, b = _rand((6, 5, 4), "float64"), _rand((4, 5, 3), "float64")
    got = einc.tensordot(a, b, ([1, 2], [1, 0]))
    ref = sum(a[:, j, k, None] * b[k, j, None, :] for j in range(5) for k in range(4))
    _close(got, ref, 20)


@pytest.mark.parametrize("axes,err", [
    (([0], [0]), ValueError),              # sizes 3 and 4 differ
    (([0, 1], [0]), ValueError),           # counts differ
    (([0, 0], [1, 1]), ValueError),        # repeated axis
    (([5], [0]), ValueError),              # out of range
    (3, ValueError),                       # more axes than b has
    (-1, ValueError),                      # a negative count
    ("ab", TypeError),                     # letters are not axes
    ((0, 1, 2), ValueError),               # not a pair
    (([0.5], [0]), TypeError),             # not an integer
])
def test_tensordot_bad_axes_raise_einc_errors(axes, err):
    a, b = np.ones((3, 4)), np.ones((4, 3))
    with pytest.raises(err) as info:
        einc.tensordot(a, b, axes)
    assert isinstance(info.value, einc.EincError)


# ---------------------------------------------------------------- transpose

@pytest.mark.parametrize("shape,axes", [
    ((3, 4), None), ((3, 4, 5), (2, 0, 1)), ((3, 4, 5), (-1, 0, -2)), ((6,), None),
    ((6,), (0,)), ((), None), ((2, 0, 3), (1, 2, 0)), ((2, 3, 4, 5), [3, 1, 0, 2]),
])
@pytest.mark.parametrize("dtype", ["float64", "int16", "complex64", "bool"])
def test_transpose_matches_numpy_and_is_a_view(shape, axes, dtype):
    a = _rand(shape, dtype)
    got, ref = einc.transpose(a, axes), np.transpose(a, axes)
    assert type(got) is np.ndarray and got.dtype == ref.dtype
    np.testing.assert_array_equal(got, ref)
    assert got.strides == ref.strides  # the same view numpy makes
    if a.size:
        assert np.shares_memory(got, a)


def test_transpose_of_a_strided_view_and_many_dimensions():
    a = _rand((6, 8, 5), "float32")[::2, ::-3, 1:]
    np.testing.assert_array_equal(einc.transpose(a, (1, 2, 0)), a.transpose(1, 2, 0))
    # 60 axes: past the 52 ascii letters the einsum string uses other scripts' letters
    shape = (2, 3) + (1,) * 56 + (4, 2)
    big = _rand(shape, "float64")
    perm = list(RNG.permutation(len(shape)))
    np.testing.assert_array_equal(einc.transpose(big, perm), big.transpose(perm))
    # 30 + 30 axes, 27 pairs contracted: 33 distinct labels, 60 letters in the string
    sa = (3,) + (1,) * 26 + (2, 2, 2)
    sb = (1,) * 26 + (2, 4, 5, 1)
    b2, c2 = _rand(sa, "float64"), _rand(sb, "float64")
    axes = ([*range(1, 27), 27], [*range(26), 26])
    with numpy_refuses():
        got = einc.tensordot(b2, c2, axes)
    _close(got, np.tensordot(b2, c2, axes), 2)


@pytest.mark.parametrize("axes", [(0,), (0, 0), (0, 2), (0, 1, 2)])
def test_transpose_bad_axes_raise(axes):
    with pytest.raises(ValueError) as info:
        einc.transpose(np.ones((2, 3)), axes)
    assert isinstance(info.value, einc.EincError)


# ---------------------------------------------------------------- opt_einsum

@pytest.fixture
def einc_calls(monkeypatch):
    """Counts the calls opt_einsum's dispatch makes into the ``einc`` module."""
    from opt_einsum.backends import dispatch
    counts = {"einsum": 0, "tensordot": 0, "transpose": 0}

    def counted(name, fn):
        def wrapper(*a, **k):
            counts[name] += 1
            return fn(*a, **k)
        return wrapper
    for name in counts:
        monkeypatch.setattr(einc, name, counted(name, getattr(einc, name)))
    # opt_einsum caches the functions it looked up: make it look again
    monkeypatch.setattr(dispatch, "_cached_funcs",
                        {k: v for k, v in dispatch._cached_funcs.items() if k[1] != "einc"})
    return counts


OE_CASES = [
    ("chain", "ij,jk,kl->il", [(6, 7), (7, 8), (8, 5)]),
    ("permuted output needs a transpose", "abc,cd->dba", [(3, 4, 5), (5, 6)]),
    ("tensordot then einsum", "abc,bcd,de,e->a", [(4, 5, 6), (5, 6, 3), (3, 2), (2,)]),
    ("hadamard and trace", "ij,ij,kk->i", [(5, 6), (5, 6), (4, 4)]),
    ("batched", "bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
@pytest.mark.parametrize("name,eq,shapes", OE_CASES, ids=[c[0] for c in OE_CASES])
def test_opt_einsum_contract_backend_einc(name, eq, shapes, dtype, einc_calls):
    ops = [_rand(s, dtype) for s in shapes]
    with numpy_refuses():
        got = opt_einsum.contract(eq, *ops, backend="einc")
    assert sum(einc_calls.values()) >= 1
    _close(got, np.einsum(eq, *ops), 64)


def test_opt_einsum_uses_tensordot_and_transpose(einc_calls):
    a, b = _rand((3, 4, 5), "float64"), _rand((5, 6), "float64")
    got = opt_einsum.contract("abc,cd->dba", a, b, backend="einc")
    assert einc_calls["tensordot"] == 1 and einc_calls["transpose"] == 1
    _close(got, np.einsum("abc,cd->dba", a, b), 5)


def test_opt_einsum_out_argument():
    a, b = _rand((4, 5), "float64"), _rand((5, 6), "float64")
    out = np.empty((6, 4))
    r = opt_einsum.contract("ij,jk->ki", a, b, out=out, backend="einc")
    assert r is out
    _close(out, np.einsum("ij,jk->ki", a, b), 5)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_opt_einsum_contract_expression_with_constants(dtype, einc_calls):
    shapes = [(6, 7), (7, 8), (8, 9), (9, 4)]
    ops = [_rand(s, dtype) for s in shapes]
    expr = opt_einsum.contract_expression("ij,jk,kl,lm->im", ops[0], shapes[1], ops[2], shapes[3],
                                          constants=[0, 2])
    ref = np.einsum("ij,jk,kl,lm->im", *ops)
    got = expr(ops[1], ops[3], backend="einc")
    _close(got, ref, 64)
    before = sum(einc_calls.values())
    assert before >= 2
    # the constants were contracted once, with einc; a second call reuses them
    v1, v3 = _rand(shapes[1], dtype), _rand(shapes[3], dtype)
    _close(expr(v1, v3, backend="einc"), np.einsum("ij,jk,kl,lm->im", ops[0], v1, ops[2], v3), 64)
    assert "einc" in expr._evaluated_constants


# ---------------------------------------------------------------- cotengra

def test_cotengra_einsum_with_einc_implementation(numpy_cannot_compute):
    ctg = pytest.importorskip("cotengra")
    a, b, c = _rand((4, 5, 6), "float64"), _rand((6, 5, 3), "float64"), _rand((3, 7), "float64")
    got = ctg.einsum("abc,cbd,de->ae", a, b, c, implementation=(einc.einsum, einc.tensordot))
    ref = sum(a[:, j, k, None, None] * b[k, j, :, None] * c[None, :, :]
              for j in range(5) for k in range(6)).sum(axis=1)
    _close(got, ref, 90)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cotengra_random_network(seed):
    ctg = pytest.importorskip("cotengra")
    inputs, output, shapes, _ = ctg.utils.rand_equation(16, 3, n_out=2, seed=seed, d_max=3)
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    calls = {"einsum": 0, "tensordot": 0}

    def ein(*a, **k):
        calls["einsum"] += 1
        return einc.einsum(*a, **k)

    def tdot(*a, **k):
        calls["tensordot"] += 1
        return einc.tensordot(*a, **k)
    tree = ctg.array_contract_tree(inputs, output, shapes=shapes, optimize="greedy")
    got = tree.contract(arrays, implementation=(ein, tdot))
    ref = tree.contract(arrays, implementation="autoray")  # numpy's einsum / tensordot
    assert calls["tensordot"] + calls["einsum"] >= len(arrays) - 1
    scale = float(np.abs(ref).max())
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12 * scale)


def test_cotengra_sliced_contraction():
    ctg = pytest.importorskip("cotengra")
    eq = "ab,bc,cd,de,ea->"
    arrays = [_rand((6, 6), "float64") for _ in range(5)]
    tree = ctg.array_contract_tree(*ctg.utils.eq_to_inputs_output(eq),
                                   shapes=[a.shape for a in arrays], optimize="greedy")
    tree = tree.slice(target_size=6)
    assert tree.nslices > 1
    got = tree.contract(arrays, implementation=(einc.einsum, einc.tensordot))
    ref = np.trace(arrays[0] @ arrays[1] @ arrays[2] @ arrays[3] @ arrays[4])
    assert np.isclose(float(got), ref, rtol=1e-10)
