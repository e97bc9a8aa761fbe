"""GPU plan rewrites: split-K (partial GEMMs over K slices + a reduce step) and copying
operands whose mode groups are not contiguous into GEMM order.

The rewritten plan is run here on the CPU executor, which takes any plan, so CI checks
the rewrite's arithmetic without a GPU; tests/test_cuda_backend.py runs it on the GPU.
"""
from __future__ import annotations

import numpy as np
import pytest

from einc.api import plan_for
from einc.execute import Executable
from einc.plan import KSlice
from oracle import assert_matches


@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(64, 8192), (8192, 64)]),
    ("lki,kjl->ji", [(64, 64, 200), (64, 150, 64)]),
    ("abcd,dbea->ec", [(24, 36, 40, 24), (24, 36, 48, 24)]),
])
def test_split_k_plan_is_correct(subs, shapes):
    plan = plan_for(subs, shapes, "float32", backend="cuda")
    gemm = [s for s in plan.steps if s.strategy == "gett"]
    assert len(gemm) == 1 and plan.steps[-1].strategy == "reduce"
    assert any(isinstance(m.label, KSlice) and m.kind == "batch" for m in gemm[0].modes)
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    Executable(plan)(ops, out)
    k = int(np.prod([m.extent for m in gemm[0].modes if m.kind in ("k", "batch")]))
    assert_matches(out, subs, *ops, terms=k)


def test_split_candidates_are_exactly_the_cuts_the_plan_makes():
    """Every K split the cost model is asked about is one _split_cuts makes exactly (so the
    predicted slices are the ones that run), including splits across two modes, and a split
    of the TCCG ccsd shape may now exceed the 64 that one mode's divisors allowed."""
    from einc.plan import SPLIT_K_SLICE, _split_candidates, _split_cuts
    rng = np.random.default_rng(3)
    for _ in range(200):
        exts = [int(e) for e in rng.choice([2, 3, 6, 8, 12, 24, 47, 48, 84, 96, 376, 384, 1000], rng.integers(1, 4))]
        total = int(np.prod(exts))
        for exact in (False, True):
            cands = _split_candidates(total, exts, exact)
            assert cands[0] == 1 and cands == sorted(set(cands))
            for s in cands[1:]:
                assert int(np.prod([d for _, d in _split_cuts(list(enumerate(exts)), s, exact)])) == s
                if not exact:  # the plan cuts with exact=True: the same cuts the model predicted
                    assert _split_cuts(list(enumerate(exts)), s, True) == _split_cuts(list(enumerate(exts)), s)
                assert total // s >= SPLIT_K_SLICE
            if exact:
                assert set(_split_candidates(total, exts)) <= set(cands)
    assert {94, 128, 192} <= set(_split_candidates(384 * 376, [384, 376]))
    plan = plan_for("lki,kjl->ji", [(384, 376, 384), (376, 376, 384)], "float32", backend="cuda")
    assert int(np.prod([m.extent for m in plan.steps[0].modes if isinstance(m.label, KSlice)])) > 64


def test_fp32_split_keeps_unit_stride_runs_and_takes_two_mode_cuts():
    """The model's fp32 split: no cut that leaves an operand's unit-stride mode under 16
    bytes (lki,kjl: B's l = 384 by 128 leaves runs of 3, 1.35 ms measured), and the exact
    two-mode cuts (141 = l by 3 x k by 47, 1.12 ms; lik,jkl's 144 = l by 48 x k by 3, 1.36
    against 128's 1.54: session 18a's einc tune, the fastest of 24 each)."""
    from einc.plan import _cuts_short_runs, _summed_outer_first
    cut = lambda p: sorted(m.extent for s in p.steps if s.strategy == "gett" for m in s.modes
                           if isinstance(m.label, KSlice))
    assert cut(plan_for("lki,kjl->ji", [(384, 376, 384), (376, 376, 384)], "float32", backend="cuda")) == [3, 47]
    assert cut(plan_for("lik,jkl->ji", [(384, 384, 384), (376, 384, 384)], "float32", backend="cuda")) == [3, 48]
    # the step as planned before any split (strategy forced: no split-K rewrite), l whole
    step = plan_for("lki,kjl->ji", [(384, 376, 384), (376, 376, 384)], "float32", backend="cuda",
                    strategy="gett").steps[0]
    assert not any(isinstance(m.label, KSlice) for m in step.modes)
    summed = _summed_outer_first(step)
    assert _cuts_short_runs(step, summed, 128, True, 4) and _cuts_short_runs(step, summed, 192, True, 4)
    assert not _cuts_short_runs(step, summed, 141, True, 4) and not _cuts_short_runs(step, summed, 96, True, 4)


def test_exact_cuts_on_many_small_modes():
    """A tensor network's 24 extent-2 summed modes: powers of two are cut exactly (one mode
    each), anything with an odd factor is not, and the search says so at once (without the
    gcd check, 192 = 2^6 x 3 tried every choice of six of the 24 modes: 0.84 s)."""
    from einc.plan import _exact_cuts, _split_candidates
    modes = [(i, 2) for i in range(24)]
    assert _exact_cuts(modes, 256) == [(i, 2) for i in range(8)]
    assert _exact_cuts(modes, 254) is None and _exact_cuts(modes, 3) is None and _exact_cuts(modes, 192) is None
    assert _split_candidates(2 ** 24, [2] * 24, exact=True) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert _exact_cuts([("l", 384), ("k", 376)], 141) == [("l", 3), ("k", 47)]
    assert _exact_cuts([("l", 384), ("k", 376)], 5) is None


def test_no_split_when_output_fills_the_gpu_or_k_is_short():
    assert len(plan_for("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float32", backend="cuda").steps) == 1
    assert len(plan_for("ij,jk->ik", [(64, 512), (512, 64)], "float32", backend="cuda").steps) == 1
    assert len(plan_for("ij,jk->ik", [(64, 8192), (8192, 64)], "float32").steps) == 1  # CPU plan
    assert len(plan_for("ij,jk->ik", [(64, 8191), (8191, 64)], "float32", backend="cuda").steps) == 1  # prime K


@pytest.mark.parametrize("subs,shapes", [
    ("amji,cbkm->kjicba", [(6, 5, 4, 6), (4, 5, 3, 5)]),      # ccsd_t: every group permuted
    ("akdbc,jk->cjbda", [(12, 5, 8, 6, 12), (40, 5)]),         # intensli-like (N > 32: not skinny)
    ("njmi,mknl->lkji", [(8, 6, 9, 10), (9, 6, 8, 7)]),        # ccsd ijkl
    ("bij,bkj->bik", [(3, 40, 50), (3, 60, 50)]),              # contiguous: no copies
])
def test_gemm_order_copies_are_correct(subs, shapes, monkeypatch):
    import einc.plan
    monkeypatch.setattr(einc.plan, "COPY_MIN_INTENSITY", 0)  # these small GEMMs would not pay
    # and the cost model runs some of them as reduce (one short sum per output): pin gett
    monkeypatch.setattr(einc.plan, "gemm_strategy", lambda *args, **kw: "gett")
    plan = plan_for(subs, shapes, "float64", backend="cuda", strategy=None)
    gemm = [s for s in plan.steps if s.strategy == "gett"]
    rng = np.random.default_rng(1)
    ops = [rng.standard_normal(s) for s in shapes]
    out = np.full(plan.out_shape, np.nan)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=64)
    if subs.startswith("bij"):
        assert len(plan.steps) == 1  # already GEMM-shaped: nothing copied
    else:
        assert len(gemm) == 1 and len(plan.steps) > 1
        # after the copies every group of the GEMM is one contiguous block of its tensors
        assert all(len([m for m in gemm[0].modes if m.kind == k]) >= 1 for k in ("m", "n", "k"))


def test_copies_only_for_heavy_gemms():
    light = plan_for("akb,jk->jba", [(384, 384, 384), (24, 384)], "float32", backend="cuda")
    assert [s.strategy for s in light.steps] == ["gett"]  # intensli: tables beat copying
    heavy = plan_for("njmi,mknl->lkji", [(84, 84, 84, 96), (84, 84, 84, 96)], "float32", backend="cuda")
    assert [s.strategy for s in heavy.steps][-1] == "gett" and len(heavy.steps) == 3


@pytest.mark.parametrize("subs,shapes", [
    ("i,i->", [(1 << 18,), (1 << 18,)]),
    ("ij,ij->", [(512, 512), (512, 512)]),
    ("ij->j", [(1 << 17, 3)]),
    ("abc->b", [(64, 2, 2048)]),
])
def test_split_reduction_plan_is_correct(subs, shapes):
    plan = plan_for(subs, shapes, "float64", backend="cuda")
    assert [s.strategy for s in plan.steps] == ["reduce", "reduce"]
    assert any(isinstance(m.label, KSlice) for m in plan.steps[0].modes)
    rng = np.random.default_rng(2)
    ops = [rng.standard_normal(s) for s in shapes]
    out = np.full(plan.out_shape, np.nan)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=1 << 18)


def test_a_reduction_over_many_small_modes_is_aligned_then_split_across_several():
    """Sycamore's last step: a full contraction over 20 modes of extent 2 or 4 whose two
    operands order them differently. The smaller operand is first copied into the other's
    order (the reduce kernels would otherwise walk a 2-element inner run and decode a long
    counter per pair: 191 ms on the H200 for Sycamore's); no single mode then offers more
    than 4 slices, so several are cut -- the outermost, so the rest of the sum stays one
    contiguous run (loops: one free, one summed)."""
    labels = "abcdefghijklmnopqrst"
    ext = {l: (4 if i % 5 == 0 else 2) for i, l in enumerate(labels)}
    a, b = labels, labels[::-1]
    subs = f"{a},{b}->"
    shapes = [tuple(ext[l] for l in a), tuple(ext[l] for l in b)]
    plan = plan_for(subs, shapes, "complex64", backend="cuda")
    assert [s.strategy for s in plan.steps] == ["reduce", "reduce", "reduce"]
    copy, split = plan.steps[0], plan.steps[1]
    assert copy.operands == (1,)  # b (same size as a: the second), into a's order
    from einc.codegen.cuda.emit_permute import permute_sets
    assert permute_sets(copy) is not None  # the mode-set tiles, not the element-wise loop
    kept = [m for m in split.modes if isinstance(m.label, KSlice)]
    assert len(kept) >= 3 and int(np.prod([m.extent for m in kept])) >= 256
    assert split.config[0] == ("f", "s")  # the cut modes merge into one, the rest of the sum too
    rng = np.random.default_rng(5)
    ops = [(rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.complex64)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=int(np.prod(shapes[0])))


def test_operands_in_one_order_are_not_copied_before_a_sum():
    labels = "abcdefghijklmnopqrst"
    shapes = [(2,) * 20, (2,) * 20]
    plan = plan_for(f"{labels},{labels}->", shapes, "complex64", backend="cuda")
    assert all(len(s.operands) == 2 or s is plan.steps[-1] for s in plan.steps)
    small = plan_for(f"{labels[:10]},{labels[:10][::-1]}->", [(2,) * 10] * 2, "complex64", backend="cuda")
    assert len(small.steps) == 1  # 1024 elements: a copy would cost more than the scattered reads


@pytest.mark.parametrize("subs,shapes,copied,terms", [
    ("abcd,dbea->ec", [(24, 36, 40, 24), (24, 36, 48, 24)], "dbea", 24 * 36 * 24),  # A d-fast, B a-fast
    ("lik,jkl->ji", [(64, 96, 128), (80, 128, 64)], "jkl", 64 * 128),               # TCCG ccsd ij-kil-lkj
])
def test_conflicting_k_unit_strides_copy_b_into_a_s_k_order(subs, shapes, copied, terms):
    plan = plan_for(subs, shapes, "float32", backend="cuda")
    first = plan.steps[0]
    assert first.strategy == "reduce" and first.text.startswith(copied + "->")
    gemm = next(s for s in plan.steps if s.strategy == "gett")
    k = [j for j, m in enumerate(gemm.modes) if m.kind == "k"]
    unit = lambda t: {j for j in k if abs(gemm.strides[t][j]) == 1}
    assert unit(1) == unit(2) and unit(1)  # both operands K-fast along the same mode
    rng = np.random.default_rng(5)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=terms)


def test_no_k_order_copy_when_the_unit_strides_agree_or_lie_outside_k():
    for subs, shapes in [("ij,kj->ik", [(300, 400), (300, 400)]), ("ij,jk->ik", [(300, 400), (400, 300)])]:
        assert all(s.strategy == "gett" for s in plan_for(subs, shapes, "float32", backend="cuda").steps)
