"""The skinny CPU kernel (einc/codegen/llvm/skinny.py): float gett steps whose big operand
is unit-stride along a free mode and whose small operand has few columns. Each case
forces strategy="gett" (small sizes would plan `reduce`), checks that the step really
takes the skinny path, then compares with numpy in
float64 on the planning and the cached call. Covers ragged lane groups (x not a multiple
of the vector width), column chunks that do not fill NP, C unit-stride along x (vector
stores) and not (scattered stores), K = 0, strided / transposed / negative-stride
operands, out= in Fortran order, the threaded row split, and dtypes that must not take
this kernel."""
from __future__ import annotations

import numpy as np
import pytest

import einc
from einc import api, execute
from oracle import assert_matches

rng = np.random.default_rng(11)


def takes_skinny(subs, *ops, out=None):
    plan = api._build(api.parse(subs), [api.ArraySpec(o.shape, o.strides, o.dtype) for o in ops],
                      out, None, "K", "safe", "auto", None, api.knobs("gett", None), compile=False)
    step = plan.steps[-1]
    return step.strategy == "gett" and execute.skinny_tables(step, execute.step_dtypes(plan, step)) is not None


def check(subs, *ops, out=None, skinny=True):
    assert takes_skinny(subs, *ops, out=out) == skinny, subs
    K = 1
    for c, n in zip(subs.split(",")[0], ops[0].shape):
        if c not in subs.split("->")[1]:
            K *= n
    for _ in range(2):  # planning call, then the cached one
        got = einc.einsum(subs, *ops, out=out, strategy="gett")
        assert_matches(got, subs, *ops, terms=max(K, 1))
    return got


def rand(shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a,k,b,j", [(13, 7, 19, 5), (9, 33, 8, 8), (17, 3, 23, 12), (9, 11, 4, 2),
                                     (31, 9, 29, 13), (8, 5, 5, 30)])
def test_scattered_c_ragged(a, k, b, j, dtype):
    """akb,jk->jba: x = b (A's unit stride), C unit-stride along a: one store per lane."""
    check("akb,jk->jba", rand((a, k, b), dtype), rand((j, k), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("l,k,i,j", [(5, 9, 21, 30), (9, 8, 8, 12), (4, 10, 33, 25), (3, 8, 5, 128)])
def test_vector_c_column_chunks(l, k, i, j, dtype):
    """lki,jl->kji: x = i is unit-stride in A and C (vector stores); N = j in chunks of NP."""
    check("lki,jl->kji", rand((l, k, i), dtype), rand((j, l), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_k_zero(dtype):
    got = check("akb,jk->jba", rand((6, 0, 11), dtype), rand((3, 0), dtype))
    assert not got.any()
    check("lki,jl->kji", rand((0, 8, 19), dtype), rand((7, 0), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multi_mode_groups(dtype):
    """Several rest modes, two K modes and two N modes, all through the tables."""
    check("akdbc,jk->cjbda", rand((5, 4, 3, 6, 11), dtype), rand((7, 4), dtype))
    check("akdbc,jek->cjbdea", rand((5, 4, 3, 6, 11), dtype), rand((3, 2, 4), dtype))
    check("aklbc,jlk->cjba", rand((4, 3, 5, 6, 9), dtype), rand((13, 5, 3), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_transposed_negative(dtype):
    A = rand((14, 9, 2 * 21), dtype)[::-1, :, ::2].copy()[:, ::-1, :]  # negative k stride
    B = rand((9, 6), dtype).T  # transposed small operand
    check("akb,jk->jba", A, B)
    A2 = rand((3, 20, 40, 17), dtype)[1, ::2, 3:30, :]  # sliced: non-contiguous rest and k
    check("akb,jk->jba", A2, rand((5, 40), dtype)[::-1, 3:30])
    # the small operand first: the big one is operand 2
    check("jk,akb->jba", rand((6, 9), dtype)[:, ::-1], rand((10, 9, 13), dtype))


def test_out_fortran_and_swapped_roles():
    A, B = rand((11, 7, 19), np.float32), rand((5, 7), np.float32)
    out = np.empty((5, 19, 11), np.float32, order="F")  # C unit-stride along j (N)
    check("akb,jk->jba", A, B, out=out)
    out = np.empty((5, 19, 11), np.float64)
    check("akb,jk->jba", A.astype(np.float64), B.astype(np.float64), out=out)


def test_threaded_rows():
    """Big enough for the row split over threads, R not a multiple of the parts."""
    A, B = rand((97, 61, 131), np.float32), rand((11, 61), np.float32)
    check("akb,jk->jba", A, B)
    A, B = rand((61, 67, 129), np.float64), rand((126, 61), np.float64)
    check("lki,jl->kji", A, B)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.complex64])
def test_other_dtypes_do_not_take_skinny(dtype):
    A = (rng.integers(-9, 9, (9, 7, 19)) + (1j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    B = rng.integers(-9, 9, (5, 7)).astype(dtype)
    assert not takes_skinny("akb,jk->jba", A, B)
    assert_matches(einc.einsum("akb,jk->jba", A, B), "akb,jk->jba", A, B, terms=7)


def test_switch_off(monkeypatch):
    monkeypatch.setenv("EINC_CPU_SKINNY", "0")
    A, B = rand((13, 7, 19), np.float32), rand((5, 7), np.float32)
    assert not takes_skinny("akb,jk->jba", A, B)


def test_guards_fall_back_to_gett():
    """Too few rest rows for the threads, or a deep K re-read per column chunk: packed gett."""
    check("akb,jk->jba", rand((5, 11, 6), np.float32), rand((3, 11), np.float32), skinny=False)
    check("lki,jl->kji", rand((4200, 8, 9), np.float32), rand((20, 4200), np.float32), skinny=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scattered_without_box(monkeypatch, dtype):
    """EINC_SKINNY_BOX=0: the same steps through one scalar store per lane."""
    monkeypatch.setenv("EINC_SKINNY_BOX", "0")
    check("akb,jk->jba", rand((13, 7, 19), dtype), rand((5, 7), dtype))
    check("akdbc,jk->cjbda", rand((5, 4, 3, 6, 11), dtype), rand((14, 4), dtype))


def kernel_dims(subs, *ops):
    plan = api._build(api.parse(subs), [api.ArraySpec(o.shape, o.strides, o.dtype) for o in ops],
                      None, None, "K", "safe", "auto", None, api.knobs("gett", None), compile=False)
    step = plan.steps[-1]
    return execute.skinny_tables(step, execute.step_dtypes(plan, step))[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("subs", ["amji,cbkm->kjicba", "bmji,cakm->kjicba", "cmji,bakm->kjicba"])
@pytest.mark.parametrize("sizes", [(13, 10, 13), (5, 3, 17), (8, 4, 9)])
def test_pack_mode_ccsd_t(subs, sizes, dtype):
    """ccsd_t: C runs along a, which A (or B) holds with a large stride; that operand is
    small, so the kernel copies it a-fast whole (pack mode 1; measured ~10% faster here
    than panels) and stores whole (masked) vectors along a."""
    a, j, m = sizes
    ext = dict(a=a, b=j, c=j, i=a, j=j, k=j, m=m)
    ins = subs.split("->")[0].split(",")
    ops = [rand(tuple(ext[c] for c in t), dtype) for t in ins]
    assert kernel_dims(subs, *ops)[8] == 1
    check(subs, *ops)


def test_pack_mode_strided_and_threaded():
    A = rand((13, 2 * 13, 10, 13), np.float32)[:, ::-2, :, ::-1]  # negative strides
    B = rand((10, 10, 10, 13), np.float32)
    assert kernel_dims("amji,cbkm->kjicba", A, B)[8] == 1
    check("amji,cbkm->kjicba", A, B)
    A, B = rand((21, 7, 12, 11), np.float64), rand((12, 9, 12, 7), np.float64)
    check("amji,cbkm->kjicba", A, B)  # big enough for the row split


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c,a,b,k,j", [(5, 41, 57, 41, 10), (3, 16, 90, 16, 8), (4, 19, 300, 3, 13),
                                       (2, 33, 50, 70, 30), (1, 129, 9, 129, 8)])
def test_panel_mode_k_fast(c, a, b, k, j, dtype):
    """cabk,kj->cjba: A unit-stride along K, C along a: panels transposed in registers,
    ragged in a (lanes) and k (the last W-k block), columns in chunks."""
    A, B = rand((c, a, b, k), dtype), rand((k, j), dtype)
    assert kernel_dims("cabk,kj->cjba", A, B)[8] == 2
    check("cabk,kj->cjba", A, B)


def test_panel_mode_strided_k_is_not_panel():
    """A K stride of 2 (a sliced view) is not contiguous, and nothing else is unit-stride:
    the packed gett runs it."""
    A = rand((5, 20, 90, 2 * 16), np.float32)[..., ::2]
    B = rand((16, 10), np.float32)
    check("cabk,kj->cjba", A, B, skinny=False)


@pytest.mark.parametrize("bits", [128, 256])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_narrower_vectors(monkeypatch, bits, dtype):
    """Every mode at SSE and AVX2 widths too (W = 2..8: other transposes and tails)."""
    monkeypatch.setenv("EINC_SKINNY_BITS", str(bits))
    check("akb,jk->jba", rand((13, 7, 19), dtype), rand((5, 7), dtype))  # box
    check("lki,jl->kji", rand((5, 9, 21), dtype), rand((30, 5), dtype))  # unit, chunks
    check("amji,cbkm->kjicba", rand((7, 5, 4, 9), dtype), rand((4, 3, 4, 5), dtype))  # pack
    check("cabk,kj->cjba", rand((3, 19, 90, 21), dtype), rand((21, 9), dtype))  # panel


def takes_rows(subs, *ops):
    plan = api._build(api.parse(subs), [api.ArraySpec(o.shape, o.strides, o.dtype) for o in ops],
                      None, None, "K", "safe", "auto", None, api.knobs("gett", None), compile=False)
    step = plan.steps[-1]
    dts = execute.step_dtypes(plan, step)
    return execute.skinny_tables(step, dts) is None and execute.skinny_rows_tables(step, dts) is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a,p,q,r", [(5, 7, 3, 11), (16, 42, 4, 9), (17, 3, 5, 7), (24, 9, 6, 5),
                                     (42, 42, 9, 10), (48, 13, 3, 3)])
def test_row_mode(a, p, q, r, dtype):
    """ap,srqp->srqa: C runs along a, which only the small operand has (row mode): ragged
    column vectors (masked), ragged row tiles, K contiguous in the big operand."""
    if np.dtype(dtype) == np.float64 and a > 24:
        a = 24 - a % 7  # three f64 zmm at most
    A, B = rand((a, p), dtype), rand((r, q, 5, p), dtype)
    assert takes_rows("ap,srqp->srqa", A, B)
    K = p
    for _ in range(2):
        assert_matches(einc.einsum("ap,srqp->srqa", A, B, strategy="gett"), "ap,srqp->srqa", A, B, terms=K)


def test_row_mode_strided_k_zero_threads():
    A = rand((20, 2 * 9), np.float32)[::-1, ::2]
    B = rand((7, 6, 5, 9), np.float32)[:, ::-1]
    assert takes_rows("ap,srqp->srqa", A, B)
    assert_matches(einc.einsum("ap,srqp->srqa", A, B, strategy="gett"), "ap,srqp->srqa", A, B, terms=9)
    A0, B0 = rand((20, 0), np.float32), rand((7, 6, 5, 0), np.float32)
    got = einc.einsum("ap,srqp->srqa", A0, B0, strategy="gett")
    assert got.shape == (7, 6, 5, 20) and not got.any()
    A, B = rand((42, 42), np.float64)[:, :21], rand((30, 29, 31, 21), np.float64)  # threaded
    assert_matches(einc.einsum("ap,srqp->srqa", A[:20], B, strategy="gett"), "ap,srqp->srqa", A[:20], B, terms=21)


@pytest.mark.parametrize("subs,shapes", [("ap,srqp->srqa", [(0, 9), (7, 6, 5, 9)]),
                                         ("akb,jk->jba", [(13, 7, 19), (0, 7)]),
                                         ("lki,jl->kji", [(5, 9, 21), (0, 5)])])
def test_no_columns(subs, shapes):
    """N = 0 (found by the hypothesis suite: the row kernel's tile had 0 vectors): an
    empty result, and neither skinny kernel is chosen."""
    ops = [rand(s, np.float32) for s in shapes]
    assert not takes_skinny(subs, *ops) and not takes_rows(subs, *ops)
    got = einc.einsum(subs, *ops, strategy="gett")
    assert got.shape == np.einsum(subs, *ops).shape
