"""The packed GEMM's integer path: int8 / uint8 / int16 operands, int32 sums (pmaddwd).

Differential against numpy.einsum with exact equality.  Operands span their dtype's
whole range, so int8 / int16 results wrap (numpy computes in the result dtype and
wraps; einc sums in int32 and truncates, the same low bits).  Every einsum test also
checks that the plan really ran gett, so a routing regression fails here rather than
silently falling back to the loop nest.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import einc
from einc.api import _build
from einc.codegen.llvm.gett import emit_gett, gett_function_name, gett_params, gett_workspace_elems
from einc.parse import parse
from einc.runtime.cpu import jit

INT_IN = ["int8", "int16", "uint8"]


def full_range(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def strategies(spec, *ops, **kw):
    """Strategies of the plan einc.einsum(spec, *ops, **kw) runs."""
    ex = _build(parse(spec), list(ops), kw.get("out"), kw.get("dtype"), "K", "safe", "auto", None,
                kw.get("strategy"), compile=False)
    return [s.strategy for s in ex.steps]


def check(spec, *ops, gett=True, **kw):
    """einc == numpy exactly (dtype too), and the plan has a gett step iff ``gett``."""
    want = np.einsum(spec, *ops, optimize=True, **{k: v for k, v in kw.items() if k != "strategy"})
    got = einc.einsum(spec, *ops, **kw)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert ("gett" in strategies(spec, *ops, **kw)) == gett, strategies(spec, *ops, **kw)


# --- GEMM shapes: ragged tiles, K = 0, deep K, wrapping (extent-1 modes vanish in the plan,
# so every M, N, K here is >= 2 or 0: an m, n and k mode each, which gett needs) ---------
SIZES = [(2, 3, 2), (7, 13, 5), (6, 16, 4), (13, 7, 97), (5, 17, 3), (97, 33, 13),
         (65, 130, 600), (260, 19, 1031), (7, 4200, 9), (4, 4, 0)]


@pytest.mark.parametrize("dtype", INT_IN)
@pytest.mark.parametrize("res", [None, "int32"])
@pytest.mark.parametrize("M,N,K", SIZES)
def test_matmul_ragged(dtype, res, M, N, K):
    rng = np.random.default_rng(M * 10007 + N * 101 + K)
    a, b = full_range(rng, (M, K), dtype), full_range(rng, (K, N), dtype)
    check("ij,jk->ik", a, b, dtype=res, strategy="gett")


@pytest.mark.parametrize("dtype", INT_IN)
@pytest.mark.parametrize("res", [None, "int32", "int16"])
def test_default_routing_picks_gett(dtype, res):
    """Above GETT_MIN_WORK the unforced plan takes gett for every result of <= 32 bits."""
    rng = np.random.default_rng(1)
    a, b = full_range(rng, (67, 61), dtype), full_range(rng, (61, 70), dtype)
    if res == "int16" and dtype == "int16":
        res = "int32"
    check("ij,jk->ik", a, b, dtype=res)


def test_int8_result_wraps():
    """int8 sums that overflow: numpy wraps in int8, so must einc."""
    a = np.full((40, 300), 127, np.int8)
    b = np.full((300, 50), -128, np.int8)
    check("ij,jk->ik", a, b)
    check("ij,jk->ik", a, b, dtype="int32")


def test_int16_pmaddwd_overflow_wraps():
    """All four pmaddwd factors -2^15: the pair sum 2^31 wraps in int32, as numpy's does."""
    a = np.full((12, 6), -32768, np.int16)
    b = np.full((6, 20), -32768, np.int16)
    check("ij,jk->ik", a, b, dtype="int32", strategy="gett")
    check("ij,jk->ik", a, b, strategy="gett")


def test_wide_results_stay_off_gett():
    """int64 sums need more than int32's bits; float and mixed operands aren't this path."""
    rng = np.random.default_rng(2)
    a, b = full_range(rng, (64, 64), np.int8), full_range(rng, (64, 64), np.int8)
    check("ij,jk->ik", a, b, dtype="int64", gett=False)
    check("ij,jk->ik", a.astype(np.int32), b.astype(np.int32), gett=False)
    check("ij,jk->ik", a, b.view(np.uint8), gett=False)  # int16 result, mixed operands


# --- layouts: strided, transposed, negative strides, permuted mode groups -----------------
@pytest.mark.parametrize("dtype", INT_IN)
@pytest.mark.parametrize("res", [None, "int32"])
def test_strided_and_transposed(dtype, res):
    rng = np.random.default_rng(3)
    big_a = full_range(rng, (150, 90), dtype)
    big_b = full_range(rng, (80, 200), dtype)
    a = big_a[::2, ::3]  # 75 x 30, both strides non-unit
    b = big_b[10:40, ::-3]  # 30 x 67, negative column stride
    check("ij,jk->ik", a, b, dtype=res)
    check("ji,kj->ik", a.T, b.T, dtype=res)  # transposed views
    check("ij,kj->ik", a, np.ascontiguousarray(b.T), dtype=res)  # B^T contiguous: k walks rows
    out = np.zeros((75, 67), dtype=res or dtype, order="F")  # column-major C: operands swapped
    check("ij,jk->ik", a, b, dtype=res, out=out)


@pytest.mark.parametrize("dtype", INT_IN)
@pytest.mark.parametrize("res", [None, "int32"])
def test_permuted_multimode(dtype, res):
    rng = np.random.default_rng(4)
    a = full_range(rng, (5, 6, 7, 4), dtype)  # abcd
    b = full_range(rng, (4, 6, 9, 5), dtype)  # dbea
    check("abcd,dbea->ec", a, b, dtype=res, strategy="gett")
    a = full_range(rng, (9, 8, 30, 7), dtype)
    b = full_range(rng, (7, 8, 33, 9), dtype)
    check("abcd,dbea->ec", a, b, dtype=res)  # big enough for the unforced plan


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_batched_and_chain(dtype):
    rng = np.random.default_rng(5)
    a, b = full_range(rng, (3, 50, 70), dtype), full_range(rng, (3, 70, 45), dtype)
    check("bij,bjk->bik", a, b)
    check("bij,bjk->bki", a, b, dtype="int32")
    c = full_range(rng, (45, 60), dtype)
    check("bij,bjk,kl->bil", a, b, c)  # int8/int16 temps feed the second gett


# --- the kernel itself: portable (no intrinsic) form and every vector width ---------------
P = ctypes.c_void_p
_FN = ctypes.CFUNCTYPE(None, P, P, P, P, P, P, ctypes.c_int64, ctypes.c_int64)


@pytest.mark.parametrize("bits", [128, 256])
@pytest.mark.parametrize("pmadd", [None, False])
@pytest.mark.parametrize("cdt,idt", [("int32", "int8"), ("int8", "int8"), ("int16", "int16"),
                                     ("uint8", "uint8"), ("int32", "uint8")])
def test_kernel_direct(bits, pmadd, cdt, idt):
    """Row-major M x K times K x N through the kernel, with a guard after the workspace."""
    if bits > jit().host_vector_bits():
        pytest.skip("host lacks this vector width")
    cdt, idt = np.dtype(cdt), np.dtype(idt)
    addr = jit().get(("gett-int-test", cdt.str, idt.str, bits, pmadd),
                     lambda: emit_gett(cdt, bits, idt, pmadd))
    f = _FN(addr)
    rng = np.random.default_rng(bits)
    M, N, K = 29, 45, 531  # ragged in every direction, two K blocks
    a, b = full_range(rng, (M, K), idt), full_range(rng, (K, N), idt)
    c = np.full((M, N), 99, cdt)
    tab = np.concatenate([np.zeros(3, np.int64), np.arange(M) * K, np.arange(M) * N,
                          np.arange(N), np.arange(N), np.arange(K), np.arange(K) * N]).astype(np.int64)
    dims = np.array([1, M, N, K], np.int64)
    n = gett_workspace_elems(cdt, bits, idt)
    raw = np.full(n + 256 + 64, 7, cdt)
    off = (-raw.ctypes.data % 64) // cdt.itemsize
    work = raw[off:off + n + 256]
    for n0, n1 in ((0, 20), (20, N)):
        f(c.ctypes.data, a.ctypes.data, b.ctypes.data, dims.ctypes.data, tab.ctypes.data,
          work.ctypes.data, n0, n1)
    assert np.all(work[n:] == 7), "kernel wrote past its workspace"
    np.testing.assert_array_equal(c, np.einsum("ij,jk->ik", a, b, dtype=cdt, casting="unsafe"))


def test_api():
    for bits in (128, 256, 512):
        for cdt in ("int8", "uint8", "int16", "int32"):
            for idt in INT_IN:
                p = gett_params(cdt, bits, idt)
                assert p.integer and p.KU % 2 == 0 and p.NR == 2 * p.W
                assert gett_workspace_elems(cdt, bits, idt) * np.dtype(cdt).itemsize % 64 == 0
                text, name = emit_gett(cdt, bits, idt, pmadd=False)
                assert name == gett_function_name(cdt, bits, idt)
                assert f'define void @"{name}"(' in text
                assert "nsw <" not in text and "nuw <" not in text  # vector sums wrap
    assert gett_function_name("int32", 256, "int8") != gett_function_name("int32", 256, "int16")
    for bad in (("int64", "int8"), ("int32", "int32"), ("float32", "int8"), ("int32", "float32")):
        with pytest.raises(TypeError):
            emit_gett(bad[0], 256, bad[1])
