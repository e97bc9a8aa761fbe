"""The packed GETT kernel (einc/codegen/llvm/gett.py), called directly through the JIT.

Each case describes a binary contraction by mode labels; the test flattens the mode
groups (batch / free-in-A / free-in-B / contracted) into the kernel's offset tables
exactly as a caller would, runs the kernel, and compares with np.einsum in float64
under the standard error bound |err| <= gamma_K * (|A| . |B|).
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

from einc.codegen.llvm.gett import (emit_gett, gett_function_name, gett_params,
                                    gett_workspace_elems)
from einc.runtime.cpu import jit

P = ctypes.c_void_p
_FN = ctypes.CFUNCTYPE(None, P, P, P, P, P, P, ctypes.c_int64, ctypes.c_int64)
SENTINEL = 12345.0
GUARD = 256  # elements after the workspace that must stay untouched


def kernel(dtype, bits=None):
    dtype = np.dtype(dtype)
    bits = bits or jit().host_vector_bits()
    addr = jit().get(("gett-test", dtype.str, bits), lambda: emit_gett(dtype, bits))
    return _FN(addr), bits


def workspace(dtype, bits):
    """An aligned workspace of exactly gett_workspace_elems(), followed by a guard."""
    dtype = np.dtype(dtype)
    n = gett_workspace_elems(dtype, bits)
    raw = np.full(n + GUARD + 64, SENTINEL, dtype)
    off = (-raw.ctypes.data % 64) // dtype.itemsize
    return raw[off:off + n + GUARD], n


def group_offsets(labels, sizes, arr, arr_labels):
    """Element offsets of every multi-index over ``labels`` (C order) into ``arr``."""
    strides = [arr.strides[arr_labels.index(c)] // arr.itemsize if c in arr_labels else 0
               for c in labels]
    ranges = [range(sizes[c]) for c in labels]
    offs = [sum(i * s for i, s in zip(idx, strides)) for idx in itertools.product(*ranges)]
    return np.asarray(offs, np.int64).reshape(-1)


def tables(spec, A, B, C):
    """dims and tab for ``spec`` = "ab,bc->ac"-style labels of A, B and C."""
    ins, out = spec.split("->")
    la, lb = ins.split(",")
    lc = out
    sizes = {}
    for arr, lab in ((A, la), (B, lb), (C, lc)):
        for c, n in zip(lab, arr.shape):
            assert sizes.setdefault(c, n) == n
    batch = [c for c in lc if c in la and c in lb]
    mfree = [c for c in lc if c in la and c not in lb]
    nfree = [c for c in lc if c in lb and c not in la]
    contr = [c for c in la if c in lb and c not in lc]
    assert sorted(batch + mfree + nfree) == sorted(lc)
    assert sorted(batch + mfree + contr) == sorted(la)
    assert sorted(batch + nfree + contr) == sorted(lb)
    g = lambda labels, arr, lab: group_offsets(labels, sizes, arr, lab)  # noqa: E731
    parts = [g(batch, A, la), g(batch, B, lb), g(batch, C, lc),
             g(mfree, A, la), g(mfree, C, lc), g(nfree, B, lb), g(nfree, C, lc),
             g(contr, A, la), g(contr, B, lb)]
    dims = np.array([len(parts[0]), len(parts[3]), len(parts[5]), len(parts[7])], np.int64)
    return dims, np.concatenate(parts).astype(np.int64)


def run(spec, A, B, C, bits=None, ranges=None):
    """C <- contraction, via the kernel, with column ranges split as ``ranges``."""
    f, bits = kernel(A.dtype, bits)
    dims, tab = tables(spec, A, B, C)
    N = int(dims[2])
    for n0, n1 in (ranges or [(0, N)]):
        work, n = workspace(A.dtype, bits)
        f(C.ctypes.data, A.ctypes.data, B.ctypes.data, dims.ctypes.data, tab.ctypes.data,
          work.ctypes.data, n0, n1)
        assert np.all(work[n:] == SENTINEL), "kernel wrote past its workspace"
    return dims


def embedded(shape, dtype, fill=np.nan):
    """A C-ordered view inside a sentinel-filled buffer (padding on every side)."""
    big = np.full(tuple(s + 3 for s in shape), SENTINEL, dtype)
    sl = tuple(slice(1, 1 + s) for s in shape)
    view = big[sl]
    view[...] = fill
    return big, view


def outside_untouched(big, shape):
    mask = np.ones(big.shape, bool)
    mask[tuple(slice(1, 1 + s) for s in shape)] = False
    return np.all(big[mask] == SENTINEL)


def check(spec, A, B, C):
    ref = np.einsum(spec, A.astype(np.float64), B.astype(np.float64), optimize=True)
    bound = np.einsum(spec, np.abs(A.astype(np.float64)), np.abs(B.astype(np.float64)),
                      optimize=True)
    ins = spec.split("->")[0].split(",")
    K = 1
    for c, n in zip(ins[0], A.shape):
        if c in ins[1] and c not in spec.split("->")[1]:
            K *= n
    eps = np.finfo(A.dtype).eps
    tol = (K + 4) * eps * bound + np.finfo(A.dtype).tiny
    err = np.abs(C.astype(np.float64) - ref)
    assert np.all(np.isfinite(C)), "non-finite output"
    assert np.all(err <= tol), f"max err {err.max()} (tol {tol[err > tol].min()})"


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


DTYPES = [np.float32, np.float64]


# --- matmul-shaped cases -----------------------------------------------------------------
SIZES = [(1, 1, 1), (1, 7, 3), (7, 1, 13), (7, 13, 5), (13, 7, 97), (6, 16, 4),
         (12, 32, 8), (97, 300, 13), (300, 97, 301), (65, 130, 600), (3, 4500, 9),
         (260, 33, 1030)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N,K", SIZES)
def test_matmul_ragged(dtype, M, N, K):
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    A, B = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype)
    big, C = embedded((M, N), dtype)
    run("mk,kn->mn", A, B, C)
    check("mk,kn->mn", A, B, C)
    assert outside_untouched(big, (M, N))


@pytest.mark.parametrize("bits", [128, 256, 512])
@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_widths(dtype, bits):
    """Every width's IR is valid and exact on this host (wider ones are legalised)."""
    rng = np.random.default_rng(bits)
    for M, N, K in [(1, 1, 1), (13, 37, 29), (70, 45, 530)]:
        A, B = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype)
        big, C = embedded((M, N), dtype)
        run("mk,kn->mn", A, B, C, bits=bits)
        check("mk,kn->mn", A, B, C)
        assert outside_untouched(big, (M, N))


@pytest.mark.parametrize("dtype", DTYPES)
def test_k_zero_writes_zeros(dtype):
    A = np.zeros((9, 0), dtype)
    B = np.zeros((0, 21), dtype)
    big, C = embedded((9, 21), dtype, fill=np.nan)
    run("mk,kn->mn", A, B, C)
    assert np.all(C == 0)
    assert outside_untouched(big, (9, 21))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(0, 5), (5, 0), (0, 0)])
def test_empty_output_writes_nothing(dtype, M, N):
    rng = np.random.default_rng(0)
    A, B = rand(rng, (M, 4), dtype), rand(rng, (4, N), dtype)
    big, C = embedded((M, N), dtype, fill=SENTINEL)
    run("mk,kn->mn", A, B, C)
    assert np.all(big == SENTINEL)


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_column_range_writes_nothing(dtype):
    rng = np.random.default_rng(1)
    A, B = rand(rng, (8, 4), dtype), rand(rng, (4, 20), dtype)
    big, C = embedded((8, 20), dtype, fill=SENTINEL)
    run("mk,kn->mn", A, B, C, ranges=[(5, 5), (7, 3)])
    assert np.all(big == SENTINEL)


@pytest.mark.parametrize("dtype", DTYPES)
def test_overwrites_garbage(dtype):
    """C's old contents (NaN, inf) never leak into the result, even across K blocks."""
    rng = np.random.default_rng(2)
    K = 3 * gett_params(dtype, jit().host_vector_bits()).KC + 5
    A, B = rand(rng, (20, K), dtype), rand(rng, (K, 40), dtype)
    big, C = embedded((20, 40), dtype)
    C[::2] = np.inf
    run("mk,kn->mn", A, B, C)
    check("mk,kn->mn", A, B, C)


# --- layouts ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_operands(dtype):
    rng = np.random.default_rng(3)
    M, N, K = 45, 67, 89
    A = np.asfortranarray(rand(rng, (M, K), dtype))  # column-major A
    B = rand(rng, (N, K), dtype).T  # column-major B
    big, C = embedded((M, N), dtype)
    run("mk,kn->mn", A, B, C)
    check("mk,kn->mn", A, B, C)
    assert outside_untouched(big, (M, N))
    # C transposed too: scattered (non unit-stride) output columns.
    Ct = np.full((N, M), np.nan, dtype)
    run("mk,kn->mn", A, B, Ct.T)
    check("mk,kn->mn", A, B, Ct.T)


@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_strides(dtype):
    rng = np.random.default_rng(4)
    A = rand(rng, (50, 2 * 70), dtype)[::-1, ::-2]
    B = rand(rng, (70, 41), dtype)[:, ::-1]
    base = np.full((50, 41), np.nan, dtype)
    C = base[::-1]
    run("mk,kn->mn", A, B, C)
    check("mk,kn->mn", A, B, C)
    C2 = base[:, ::-1]  # reversed output columns
    run("mk,kn->mn", A, B, C2)
    check("mk,kn->mn", A, B, C2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_permuted_4d_contraction(dtype):
    """abcd,dbea->ec: M = {c}, N = {e}, K = {a, b, d} with permuted strides."""
    rng = np.random.default_rng(5)
    a, b, c, d, e = 5, 3, 23, 7, 19
    A = rand(rng, (a, b, c, d), dtype)
    B = rand(rng, (d, b, e, a), dtype)
    C = np.full((e, c), np.nan, dtype)
    run("abcd,dbea->ec", A, B, C)
    check("abcd,dbea->ec", A, B, C)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_mode_groups(dtype):
    """Two free modes per side, two contracted modes, output modes interleaved."""
    rng = np.random.default_rng(6)
    A = rand(rng, (4, 6, 5, 3), dtype)  # i k j l
    B = rand(rng, (3, 7, 6, 2), dtype)  # l p k q
    C = np.full((7, 4, 2, 5), np.nan, dtype)  # p i q j
    run("ikjl,lpkq->piqj", A, B, C)
    check("ikjl,lpkq->piqj", A, B, C)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched(dtype):
    rng = np.random.default_rng(7)
    A = rand(rng, (3, 17, 29), dtype)
    B = rand(rng, (3, 29, 35), dtype)
    big, C = embedded((3, 17, 35), dtype)
    run("bmk,bkn->bmn", A, B, C)
    check("bmk,bkn->bmn", A, B, C)
    assert outside_untouched(big, (3, 17, 35))
    # Batch mode in a different position in every operand, and K = 0 per batch.
    A2 = rand(rng, (11, 4, 9), dtype)  # m b k
    B2 = rand(rng, (9, 13, 4), dtype)  # k n b
    C2 = np.full((13, 4, 11), np.nan, dtype)  # n b m
    run("mbk,knb->nbm", A2, B2, C2)
    check("mbk,knb->nbm", A2, B2, C2)
    C3 = np.full((4, 5, 6), np.nan, dtype)
    run("bmk,bkn->bmn", np.ones((4, 5, 0), dtype), np.ones((4, 0, 6), dtype), C3)
    assert np.all(C3 == 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_column_ranges_cover_result(dtype):
    """Two calls on [0, s) and [s, N), each with its own workspace, give the whole C."""
    rng = np.random.default_rng(8)
    M, N, K = 31, 101, 300
    A, B = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype)
    big, C = embedded((M, N), dtype)
    run("mk,kn->mn", A, B, C, ranges=[(0, 37)])
    assert np.all(np.isnan(C[:, 37:])), "wrote outside its column range"
    run("mk,kn->mn", A, B, C, ranges=[(37, N)])
    check("mk,kn->mn", A, B, C)
    assert outside_untouched(big, (M, N))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_inf_propagate(dtype):
    rng = np.random.default_rng(9)
    A, B = rand(rng, (10, 20), dtype), rand(rng, (20, 30), dtype)
    A[3, 4] = np.nan
    B[5, 7] = np.inf
    C = np.empty((10, 30), dtype)
    run("mk,kn->mn", A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.array_equal(np.isnan(C), np.isnan(ref))
    assert np.array_equal(np.isinf(C), np.isinf(ref))


def test_api():
    for dt in DTYPES:
        for bits in (128, 256, 512):
            text, name = emit_gett(dt, bits)
            assert name == gett_function_name(dt, bits)
            assert f'define void @"{name}"(' in text
            p = gett_params(dt, bits)
            assert p.NR % p.W == 0 and p.MC % p.MR == 0 and p.KC % p.KU == 0
            assert gett_workspace_elems(dt, bits) * np.dtype(dt).itemsize % 64 == 0
    assert gett_function_name(np.float32, 256) != gett_function_name(np.float64, 256)
    with pytest.raises(TypeError):
        emit_gett(np.int32, 256)


# --- packing fast paths, driven by hand-made offset tables ------------------------------
def run_tabled(dtype, NB, M, N, K, tbl, seed, ranges=None):
    """Run the kernel on explicit tables (a dict of the nine of them) and check C.

    A, B and C are flat buffers just large enough for the offsets; the reference gathers
    through the same tables, so any table shape (partly contiguous, jumping) is fair.
    """
    names = ("bA", "bB", "bC", "mA", "mC", "nB", "nC", "kA", "kB")
    t = {k: np.asarray(tbl[k], np.int64) for k in names}
    rng = np.random.default_rng(seed)
    extent = lambda *ks: int(sum(t[k].max(initial=0) for k in ks)) + 1  # noqa: E731
    A = rand(rng, extent("bA", "mA", "kA"), dtype)
    B = rand(rng, extent("bB", "kB", "nB"), dtype)
    C = np.full(extent("bC", "mC", "nC"), np.nan, dtype)
    f, bits = kernel(dtype)
    dims = np.array([NB, M, N, K], np.int64)
    tab = np.concatenate([t[k] for k in names]).astype(np.int64)
    for n0, n1 in (ranges or [(0, N)]):
        work, n = workspace(dtype, bits)
        f(C.ctypes.data, A.ctypes.data, B.ctypes.data, dims.ctypes.data, tab.ctypes.data,
          work.ctypes.data, n0, n1)
        assert np.all(work[n:] == SENTINEL), "kernel wrote past its workspace"
    Ag = A.astype(np.float64)[t["bA"][:, None, None] + t["mA"][None, :, None]
                              + t["kA"][None, None, :]]
    Bg = B.astype(np.float64)[t["bB"][:, None, None] + t["kB"][None, :, None]
                              + t["nB"][None, None, :]]
    ref = np.einsum("bmk,bkn->bmn", Ag, Bg)
    bound = np.einsum("bmk,bkn->bmn", np.abs(Ag), np.abs(Bg))
    got = C[t["bC"][:, None, None] + t["mC"][None, :, None] + t["nC"][None, None, :]]
    tol = (K + 4) * np.finfo(dtype).eps * bound + np.finfo(dtype).tiny
    assert np.all(np.isfinite(got)), "non-finite output"
    err = np.abs(got.astype(np.float64) - ref)
    assert np.all(err <= tol), f"max err {err.max()}"


def runs(n, run, gap, start=0):
    """n offsets, contiguous in runs of ``run``, each run ``gap`` past the last."""
    i = np.arange(n)
    return start + i + (i // run) * gap


def c_tables(NB, M, N, **kw):
    """Row-major C tables (distinct elements for every (b, m, n))."""
    d = dict(bC=np.arange(NB) * M * N, mC=np.arange(M) * N, nC=np.arange(N))
    d.update(kw)
    return d


@pytest.mark.parametrize("dtype", DTYPES)
def test_pack_a_k_contiguous(dtype):
    """kA unit stride: whole-row copies.  Ragged MR tails, k tails off the vector width,
    several K blocks, and rows far apart (the permuted 'abk,kj->bja' layout)."""
    prm = gett_params(dtype, jit().host_vector_bits())
    for M, K in [(prm.MR, 1), (prm.MR + 1, prm.W - 1), (5 * prm.MR - 1, prm.W + 3),
                 (2 * prm.MR, 2 * prm.KC + prm.W + 1), (prm.MC + 7, 37)]:
        mA = np.arange(M) * (K + 3)  # gaps between rows
        mA = mA[np.random.default_rng(M).permutation(M)]  # and in any order
        N = 11
        tbl = c_tables(1, M, N, bA=[0], bB=[0], mA=mA, kA=np.arange(K),
                       kB=np.arange(K) * N, nB=np.arange(N))
        run_tabled(dtype, 1, M, N, K, tbl, seed=M + K)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pack_a_k_partly_contiguous(dtype):
    """kA contiguous only in runs, or in one K block but not the next: the whole-row
    copy must not be used where the run breaks."""
    prm = gett_params(dtype, jit().host_vector_bits())
    M, N = 3 * prm.MR + 2, 9
    Ks = [(prm.W + 5, runs(prm.W + 5, prm.W, 4)),  # one jump inside a vector of k
          (prm.KC + 9, np.r_[np.arange(prm.KC), prm.KC + 50 + 3 * np.arange(9)]),
          (prm.KC + 9, np.r_[np.arange(prm.KC + 3), prm.KC + 60 + np.arange(6)]),
          (2 * prm.W, np.arange(2 * prm.W)[::-1])]  # unit stride backwards is not unit
    for K, kA in Ks:
        mA = np.arange(M) * (int(kA.max()) + 2)
        tbl = c_tables(1, M, N, bA=[0], bB=[0], mA=mA, kA=kA,
                       kB=np.arange(K) * N, nB=np.arange(N))
        run_tabled(dtype, 1, M, N, K, tbl, seed=K)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pack_a_m_contiguous(dtype):
    """kA strided, mA contiguous in runs: panels inside a run take MR-wide loads, panels
    across a run boundary (runs not a multiple of MR) and ragged ones gather."""
    prm = gett_params(dtype, jit().host_vector_bits())
    K, N = 2 * prm.W + 3, 13
    for M, run_len in [(4 * prm.MR, 10 ** 6), (4 * prm.MR + 1, prm.MR + 1),
                       (3 * prm.MR + 4, 2 * prm.MR), (7, prm.MR - 1)]:
        mA = runs(M, run_len, 3)
        kA = np.arange(K) * (int(mA.max()) + 1)
        tbl = c_tables(2, M, N, bA=[0, 5], bB=[0, 2], mA=mA, kA=kA,
                       kB=np.arange(K) * (N + 2), nB=np.arange(N))
        run_tabled(dtype, 2, M, N, K, tbl, seed=M)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pack_b_panel_contiguous(dtype):
    """nB contiguous only in runs (not unit over [n0, n1)): full panels inside a run take
    vector rows, panels straddling a run boundary and the ragged last one gather."""
    prm = gett_params(dtype, jit().host_vector_bits())
    M, K = 2 * prm.MR + 1, 29
    for N, run_len in [(3 * prm.NR + 5, prm.NR + 3), (4 * prm.NR, 2 * prm.NR),
                       (2 * prm.NR + 1, prm.NR - 1)]:
        nB = runs(N, run_len, 7)
        kB = np.arange(K) * (int(nB.max()) + 1)
        tbl = c_tables(1, M, N, bA=[0], bB=[0], mA=np.arange(M) * K, kA=np.arange(K),
                       kB=kB, nB=nB)
        run_tabled(dtype, 1, M, N, K, tbl, seed=N,
                   ranges=[(0, N // 2 + 1), (N // 2 + 1, N)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_narrow_column_panels(dtype):
    """N at most one vector wide (the one-vector micro-kernel) and just past it."""
    prm = gett_params(dtype, jit().host_vector_bits())
    rng = np.random.default_rng(10)
    for N in sorted({1, prm.W - 1, prm.W, prm.W + 1, prm.NR + 1, prm.NR + prm.W}):
        M, K = 3 * prm.MR + 1, prm.KC + 5
        A, B = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype)
        big, C = embedded((M, N), dtype)
        run("mk,kn->mn", A, B, C)
        check("mk,kn->mn", A, B, C)
        assert outside_untouched(big, (M, N))
    # The permuted skinny contraction that motivated the row-copy packing.
    A = rand(rng, (13, 11, 17), dtype)
    B = rand(rng, (17, 8), dtype)
    C = np.full((11, 8, 13), np.nan, dtype)
    run("abk,kj->bja", A, B, C)
    check("abk,kj->bja", A, B, C)
