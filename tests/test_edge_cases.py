"""Fixed edge cases einsum users hit, each against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import einc
from oracle import assert_matches

rng = np.random.default_rng(1)


def rand(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ii->i", [(5, 5)]),                     # diagonal
    ("ii->", [(5, 5)]),                      # trace
    ("ii", [(5, 5)]),                        # implicit trace
    ("iij->j", [(3, 3, 4)]),                 # partial diagonal
    ("iji->ij", [(3, 4, 3)]),
    ("ij->ji", [(3, 4)]),                    # permutation
    ("ij->", [(3, 4)]),                      # full sum
    ("ij,jk", [(3, 4), (4, 5)]),             # implicit output
    ("ba", [(3, 4)]),                        # implicit output is sorted -> transpose
    ("i,j->ij", [(3,), (4,)]),               # outer product
    ("i,i->", [(7,), (7,)]),                 # dot
    ("ij,ij->i", [(6, 9), (6, 9)]),          # row-dot
    ("ij,ij->ij", [(6, 9), (6, 9)]),         # Hadamard
    (",ij->ij", [(), (3, 4)]),               # scalar operand
    (",->", [(), ()]),                       # scalars only
    ("->", [()]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),        # ellipsis broadcasting
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),          # implicit with ellipsis
    ("i...,i...->...", [(3, 2, 2), (3, 1, 2)]),
    ("ij...,jk...->ik...", [(2, 3), (3, 4)]),            # empty ellipsis
    ("ij,jk->ik", [(2, 1), (3, 4)]),                     # size-1 label broadcast (numpy does)
    ("ijk,jkl->il", [(4, 3, 2), (3, 2, 5)]),
    ("abcd,dbea->ec", [(3, 4, 5, 2), (2, 4, 6, 3)]),
    ("ij,jk,kl,lm->im", [(3, 4), (4, 5), (5, 6), (6, 2)]),
])
@pytest.mark.parametrize("strategy", [None, "generic", "reduce", "gett"])
def test_fixed_cases(subscripts, shapes, strategy):
    ops = [rand(*s) for s in shapes]
    assert_matches(einc.einsum(subscripts, *ops, strategy=strategy), subscripts, *ops, terms=64)


@pytest.mark.parametrize("strategy", [None, "generic", "reduce", "gett"])
def test_k_zero_gives_zeros(strategy):
    a, b = np.empty((4, 0)), np.empty((0, 5))
    got = einc.einsum("ij,jk->ik", a, b, strategy=strategy)
    np.testing.assert_array_equal(got, np.zeros((4, 5)))


@pytest.mark.parametrize("shapes", [[(0, 3), (3, 4)], [(3, 4), (4, 0)], [(0,), (0,)]])
def test_empty_dimensions(shapes):
    ops = [rand(*s) for s in shapes]
    subs = "ij,jk->ik" if len(shapes[0]) == 2 else "i,i->i"
    got = einc.einsum(subs, *ops)
    assert got.shape == np.einsum(subs, *ops).shape


def test_ragged_gemm_tails():
    for m, n, k in [(1, 1, 1), (7, 13, 5), (97, 33, 301), (65, 129, 17)]:
        a, b = rand(m, k, dtype=np.float32), rand(k, n, dtype=np.float32)
        assert_matches(einc.einsum("ij,jk->ik", a, b, strategy="gett"), "ij,jk->ik", a, b, terms=k)


def test_noncontiguous_and_negative_strides():
    a = rand(8, 10)[::2, ::-1]
    b = rand(12, 10).T[::-1]
    assert_matches(einc.einsum("ij,jk->ik", a, b), "ij,jk->ik", a, b, terms=10)
    assert_matches(einc.einsum("ij->ji", a), "ij->ji", a)


def test_scalar_result_is_numpy_scalar():
    r = einc.einsum("i,i", np.arange(3), np.arange(3))
    assert isinstance(r, np.int64) and r == 5


def test_python_scalars_and_nested_lists():
    assert_matches(einc.einsum(",i->i", 2.5, [1.0, 2.0]), ",i->i", 2.5, [1.0, 2.0])
    assert_matches(einc.einsum("ij,j->i", [[1, 2], [3, 4]], [1, 1]), "ij,j->i", [[1, 2], [3, 4]], [1, 1])


def test_ellipsis_reduced_away_sums_broadcast_dims():
    a = rand(3, 4, 5)
    np.testing.assert_allclose(einc.einsum("i...->i", a), a.sum(axis=(1, 2)))
    np.testing.assert_allclose(einc.einsum("...->", a), a.sum())


def test_many_operands():
    n = 64
    mats = [rand(3, 3) * 0.5 for _ in range(n)]
    subs = ",".join(f"{chr(0x100 + i)}{chr(0x100 + i + 1)}" for i in range(n))
    subs += f"->{chr(0x100)}{chr(0x100 + n)}"
    got = einc.einsum(subs, *mats)
    ref = mats[0]
    for m in mats[1:]:
        ref = ref @ m
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_many_labels_sublist():
    n = 240  # far beyond numpy's 52 letters
    vecs = [rand(2) for _ in range(n)]
    args = []
    for i, v in enumerate(vecs):
        args += [v, [("site", i)]]
    args.append([("site", i) for i in range(0, n, 60)])
    got = einc.einsum(*args)
    ref = np.ones(())
    for i, v in enumerate(vecs):
        if i % 60 == 0:
            ref = np.multiply.outer(ref, v)
        else:
            ref = ref * v.sum()
    np.testing.assert_allclose(got, ref, rtol=1e-9)


def test_named_axes_form():
    x, y = rand(2, 3, 4), rand(2, 4, 5)
    got = einc.einsum("batch row k, batch k col -> batch row col", x, y)
    assert_matches(got, "brk,bkc->brc", x, y, terms=4)


def test_unicode_labels():
    a, b = rand(3, 4), rand(4, 5)
    assert_matches(einc.einsum("αβ,βγ->αγ", a, b), "ij,jk->ik", a, b, terms=4)


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal", "dp", "auto",
                                      [(0, 1), (0, 1)], ["einsum_path", (1, 2), (0, 1)],
                                      ("greedy", 10**6)])
def test_optimize_values(optimize):
    ops = [rand(3, 4), rand(4, 5), rand(5, 6)]
    assert_matches(einc.einsum("ij,jk,kl->il", *ops, optimize=optimize), "ij,jk,kl->il", *ops, terms=20)


def test_memory_limit_changes_path():
    ops = [rand(8, 2), rand(2, 8), rand(8, 8)]
    path, _ = einc.contract_path("ij,jk,kl->il", *ops, optimize="optimal", memory_limit=16)
    assert isinstance(path, list) and all(isinstance(c, tuple) for c in path)
    assert_matches(einc.einsum("ij,jk,kl->il", *ops, memory_limit=16), "ij,jk,kl->il", *ops, terms=16)


def test_contract_path_matches_opt_einsum():
    import opt_einsum as oe
    shapes = [(10, 20), (20, 30), (30, 5)]
    path, info = einc.contract_path("ij,jk,kl->il", *shapes, shapes=True)
    ref, _ = oe.contract_path("ij,jk,kl->il", *shapes, shapes=True)
    assert path == ref and info.opt_cost > 0


def test_out_argument():
    a, b = rand(3, 4), rand(4, 5)
    out = np.empty((5, 3)).T  # a transposed view: written through its strides
    r = einc.einsum("ij,jk->ik", a, b, out=out)
    assert r is out
    np.testing.assert_allclose(out, a @ b)


def test_dtype_and_casting():
    a = rand(3, 4)
    got = einc.einsum("ij->i", a, dtype=np.float32, casting="same_kind")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a.sum(1), rtol=1e-6)


def test_float16_accumulates_in_float32():
    a = np.full(4096, 0.1, dtype=np.float16)
    got = einc.einsum("i->", a)
    exact = 4096 * float(np.float16(0.1))
    assert got.dtype == np.float16 and abs(float(got) - exact) / exact < 1e-3


def test_int_wraparound_like_numpy():
    a = np.full(100, 100, np.int8)
    assert einc.einsum("i->", a) == np.einsum("i->", a)
    b = np.full((3, 3), 2**62, np.int64)
    np.testing.assert_array_equal(einc.einsum("ij,jk->ik", b, b), np.einsum("ij,jk->ik", b, b))


def test_order_argument():
    a, b = rand(3, 4), rand(4, 5)
    assert einc.einsum("ij,jk->ik", a, b, order="F").flags.f_contiguous
    assert einc.einsum("ij,jk->ik", a, b, order="C").flags.c_contiguous


def test_single_operand_relabelling_is_a_view_like_numpy():
    a = rand(4, 4)
    d = einc.einsum("ii->i", a)
    assert np.shares_memory(d, a) == np.shares_memory(np.einsum("ii->i", a), a)
    np.testing.assert_array_equal(d, np.diag(a))
    np.testing.assert_array_equal(einc.einsum("ij->ji", a), a.T)
    assert not np.shares_memory(einc.einsum("ij->i", a), a)  # a reduction computes


def test_output_ellipsis_without_input_ellipsis_like_numpy():
    a = rand(3, 4)
    assert_matches(einc.einsum("ij->...ij", a), "ij->...ij", a)


@pytest.mark.parametrize("subs", ["ij,ij->ij", "ij,ij->i", "ij->ji", "i,j->ij", "ijk->kj"])
def test_steps_split_across_threads(subs, monkeypatch):
    import einc.execute as ex
    monkeypatch.setattr(ex, "num_threads", lambda: 3)
    monkeypatch.setattr(ex, "LOOP_PARALLEL_MIN", 1000)
    lhs = subs.split("->")[0].split(",")
    sizes = {"i": 301, "j": 257, "k": 7}
    ops = [rand(*[sizes[c] for c in t]) for t in lhs]
    ops[0] = ops[0][::-1]  # negative strides: the per-thread byte offsets must follow them
    einc.api._EXECUTABLES.data.clear()
    assert_matches(einc.einsum(subs, *ops, strategy="reduce"), subs, *ops, terms=8)
    assert_matches(einc.einsum(subs, *ops, strategy="reduce", order="F"), subs, *ops, terms=8)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(70, 90), (90, 65)]),
    ("bij,bkj->bik", [(3, 40, 50), (3, 60, 50)]),
    ("ji,kj->ki", [(90, 70), (65, 90)]),
])
def test_complex_gemm_as_real_gemm(dtype, subs, shapes):
    """Complex GEMM-shaped steps run as one real GEMM (K and N doubled) on the CPU."""
    plan = einc.api.plan_for(subs, shapes, dtype)
    assert plan.steps[-1].strategy == "gett" and plan.steps[-1].compute.kind == "f"
    ops = [(rand(*s) + 1j * rand(*s)).astype(dtype) for s in shapes]
    ops[0] = np.asfortranarray(ops[0])[..., ::-1][..., ::-1]  # another layout, same values
    assert_matches(einc.einsum(subs, *ops), subs, *ops, terms=200)
    out = np.full(np.einsum(subs, *ops).shape[::-1], np.nan, dtype=dtype).T  # strided out=
    einc.einsum(subs, *ops, out=out)
    assert_matches(out, subs, *ops, terms=200)
