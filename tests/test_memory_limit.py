"""memory_limit bounds the bytes of every temporary a plan allocates, by construction.

The CPU cases run against numpy; the CUDA cases check plans (built without a device)
and run them on the CPU executor, which takes any plan, as test_gpu_plan_rewrites does.
"""
from __future__ import annotations

import numpy as np
import pytest

import einc
from einc.api import plan_for
from einc.execute import Executable
from einc.memory import limit_bytes, temp_bytes
from einc.plan import KSlice
from oracle import assert_matches


@pytest.mark.parametrize("given,expected", [
    (4096, 4096), (np.int64(7), 7), (0, 0), (1e9, 10**9), ("512MB", 512 * 10**6), ("32GiB", 32 * 2**30),
    ("1.5 kB", 1500), ("2KiB", 2048), ("100", 100), ("3b", 3), ("1TiB", 2**40), (None, None), (-1, None),
])
def test_limit_units(given, expected):
    assert limit_bytes(given) == expected


@pytest.mark.parametrize("bad", ["lots", "12 parsecs", "-5MB", -5, True, float("nan"), float("inf"), [1], "GB"])
def test_bad_limits_are_refused(bad):
    with pytest.raises(einc.EincValueError, match="memory_limit"):
        limit_bytes(bad)
    with pytest.raises(einc.EincValueError, match="memory_limit"):
        einc.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4)), memory_limit=bad)


def _ops(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


CHAIN = ("ij,jk,kl->il", [(2, 300), (300, 300), (300, 2)])  # any pairwise path holds 600 elements


def test_limit_below_the_intermediate_gives_one_loop_nest():
    subs, shapes = CHAIN
    free = plan_for(subs, shapes)
    assert temp_bytes(free) == 600 * 8  # without a limit: one (2, 300) intermediate
    for limit in (0, 1000, "4KB", 600 * 8 - 1):
        p = plan_for(subs, shapes, memory_limit=limit)
        assert temp_bytes(p) <= limit_bytes(limit) and len(p.steps) == 1
        assert any("memory_limit" in n for n in p.notes)
        ops = _ops(shapes)
        assert_matches(einc.einsum(subs, *ops, memory_limit=limit), subs, *ops, terms=300 * 300)
    p = plan_for(subs, shapes, memory_limit=600 * 8)  # exactly enough: the pairwise plan stays
    assert temp_bytes(p) == 600 * 8 and len(p.steps) == 2


FOUR = ("ab,bc,cd,de->ae", [(10, 100), (100, 40), (40, 100), (100, 10)])


def test_the_sum_of_intermediates_is_bounded_not_only_the_largest():
    subs, shapes = FOUR
    free = plan_for(subs, shapes)
    sizes = [b.size * 8 for b in free.buffers if b.role == "temp"]
    assert len(sizes) >= 2
    limit = max(sizes) + min(sizes) - 8  # each intermediate fits alone, not all together
    assert temp_bytes(free) > limit
    p = plan_for(subs, shapes, memory_limit=limit)
    assert temp_bytes(p) <= limit
    ops = _ops(shapes, 1)
    assert_matches(einc.einsum(subs, *ops, memory_limit=limit), subs, *ops, terms=10**6)
    expr = einc.contract_expression(subs, *shapes, memory_limit=limit)
    assert temp_bytes(next(iter(expr._cache.values())).plan) <= limit
    assert_matches(expr(*ops), subs, *ops, terms=10**6)


def test_private_labels_need_no_presum_under_a_tight_limit():
    subs, shapes = "ijx,jk->ik", [(20, 30, 7), (30, 9)]
    assert temp_bytes(plan_for(subs, shapes)) == 20 * 30 * 8  # x summed out first
    p = plan_for(subs, shapes, memory_limit=16)
    assert temp_bytes(p) == 0 and len(p.steps) == 1
    ops = _ops(shapes, 2)
    assert_matches(einc.einsum(subs, *ops, memory_limit=16), subs, *ops, terms=210)


def test_max_input_and_numpys_element_limit():
    subs, shapes = CHAIN
    ops = _ops(shapes, 3)
    p = plan_for(subs, shapes, memory_limit="max_input")
    assert temp_bytes(p) <= 300 * 300 * 8
    assert_matches(einc.einsum(subs, *ops, memory_limit="max_input"), subs, *ops, terms=300 * 300)
    # numpy's optimize=("greedy", n) counts elements: 599 < 600 forbids the intermediate
    p = plan_for(subs, shapes, optimize=("greedy", 599))
    assert temp_bytes(p) == 0
    assert_matches(einc.einsum(subs, *ops, optimize=("greedy", 599)), subs, *ops, terms=300 * 300)
    assert temp_bytes(plan_for(subs, shapes, optimize=("greedy", 600))) == 600 * 8


def test_an_explicit_path_or_strategy_that_cannot_fit_is_refused():
    subs, shapes = CHAIN
    ops = _ops(shapes, 4)
    with pytest.raises(einc.EincValueError, match=r"allows 100 bytes.*needs 4800 bytes"):
        einc.einsum(subs, *ops, optimize=[(0, 1), (0, 1)], memory_limit=100)
    with pytest.raises(einc.EincValueError, match=r"memory_limit='1KB' allows 1000 bytes"):
        einc.einsum("ijx,jk->ik", *_ops([(20, 30, 7), (30, 9)]), strategy="reduce", memory_limit="1KB")
    # the same explicit path with room for its intermediate runs as given
    assert_matches(einc.einsum(subs, *ops, optimize=[(0, 1), (0, 1)], memory_limit=4800), subs, *ops,
                   terms=300 * 300)


def test_complex_as_real_scratch_counts():
    subs, shapes = "ij,jk->ik", [(64, 64), (64, 64)]
    free = plan_for(subs, shapes, "complex128")
    assert temp_bytes(free) > 0  # the real-GEMM rewrite's scratch
    p = plan_for(subs, shapes, "complex128", memory_limit=1024)
    assert temp_bytes(p) == 0
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(s) + 1j * rng.standard_normal(s) for s in shapes)
    assert_matches(einc.einsum(subs, a, b, memory_limit=1024), subs, a, b, terms=64)


# --- the CUDA plan (no device needed) ------------------------------------------------------

def _run_on_cpu(plan, subs, ops, terms):
    out = np.full(plan.out_shape, np.nan, dtype=plan.out_dtype)
    Executable(plan)(ops, out)
    assert_matches(out, subs, *ops, terms=terms)


def test_cuda_split_k_partial_sums_count():
    subs, shapes = "ij,jk->ik", [(64, 8192), (8192, 64)]
    free = plan_for(subs, shapes, "float32", backend="cuda")
    assert temp_bytes(free) >= 2 * 64 * 64 * 4  # at least two slices of partial sums
    p = plan_for(subs, shapes, "float32", backend="cuda", memory_limit="16KiB")
    assert temp_bytes(p) <= 16 * 1024
    assert not any(isinstance(m.label, KSlice) for s in p.steps for m in s.modes)
    assert [s.strategy for s in p.steps] == ["gett"]
    ops = [o.astype(np.float32) for o in _ops(shapes, 6)]
    _run_on_cpu(p, subs, ops, 8192)
    from einc.codegen.cuda.emit import compile_options, emit_step
    from einc.runtime.cuda import compile_cubin
    for step in p.steps:  # and it is a plan the CUDA backend compiles
        k = emit_step(p, step, "sm_90")
        assert compile_cubin(k.source, k.name, compile_options(getattr(k, "arch", "") or "sm_90"))[:4] == b"\x7fELF"


def test_cuda_split_reduction_partial_sums_count():
    subs, shapes = "i,i->", [(1 << 18,), (1 << 18,)]
    assert len(plan_for(subs, shapes, backend="cuda").steps) == 2
    p = plan_for(subs, shapes, backend="cuda", memory_limit=64)
    assert temp_bytes(p) <= 64 and len(p.steps) == 1
    _run_on_cpu(p, subs, _ops(shapes, 7), 1 << 18)


def test_cuda_gemm_order_copies_count(monkeypatch):
    import einc.plan
    monkeypatch.setattr(einc.plan, "COPY_MIN_INTENSITY", 0)  # small GEMMs get copies too
    monkeypatch.setattr(einc.plan, "gemm_strategy", lambda *args, **kw: "gett")
    subs, shapes = "amji,cbkm->kjicba", [(6, 5, 4, 6), (4, 5, 3, 5)]
    free = plan_for(subs, shapes, "float64", backend="cuda")
    copies = temp_bytes(free)
    assert copies > 0 and len(free.steps) > 1
    p = plan_for(subs, shapes, "float64", backend="cuda", memory_limit=copies - 1)
    assert temp_bytes(p) < copies
    _run_on_cpu(p, subs, _ops(shapes, 8), 64)
    tight = plan_for(subs, shapes, "float64", backend="cuda", memory_limit=0)
    assert temp_bytes(tight) == 0
    _run_on_cpu(tight, subs, _ops(shapes, 8), 64)
