"""The differential suite's random einsums as CUDA plans, every step's kernel run on the CPU
emulator of the CUDA execution model (tests/test_cuda_codegen.py): the GPU backend's plans and
kernels checked against numpy where CI has no GPU. Dtypes the emulator runs end to end (no
complex: its plans alias buffers, which the emulator does not). Operands C-contiguous (the
plan is made for their shapes)."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from einc import api

from oracle import assert_matches, summed_terms
from test_cuda_codegen import emulate, make, needs_emulator
from test_differential import case_operands, einsums

RUNS = ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64")


@needs_emulator
@settings(max_examples=int(os.environ.get("EINC_FUZZ_N", "12")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(case=einsums())
def test_emulated_cuda_plans_match_numpy(case):
    subscripts, shapes, dtypes, _, strategy, _ = case
    assume(all(d in RUNS for d in dtypes))
    ops = [o.copy(order="C") for o in case_operands(case)]  # (ascontiguousarray makes a 0-d array 1-d)
    p = api.plan_for(subscripts, [o.shape for o in ops], [o.dtype.name for o in ops], strategy=strategy,
                     backend="cuda")  # (a valid einsum the CUDA planner refuses is a failure too)
    got = emulate(p, ops, max_grid=2)
    terms = max(1, int(np.prod([max(1, n) for s in shapes for n in s])))
    assert_matches(got, subscripts, *ops, terms=terms)


@st.composite
def gemm_like(draw):
    """Two operands with batch, M, N and K groups (labels in random orders), extents from a
    set that reaches every SIMT family the planner picks for a GEMM-shaped step: a group of a
    few elements against a large one (skinny), a small output over a long K (smallmn, split-K),
    ragged tiles, a short K under a large output (stream)."""
    labels = iter("abcdefghij")
    small = draw(st.integers(0, 3)) == 0  # a small output over K >= 65536 (smallmn's shape)
    ext = st.sampled_from([1, 2, 3, 5, 8, 11] if small else [1, 3, 8, 17, 24, 33, 33, 64, 64, 130])
    group = lambda lo, hi: [(next(labels), draw(ext)) for _ in range(draw(st.integers(lo, hi)))]
    batch, m, n, k = group(0, 0 if small else 1), group(1, 2), group(1, 2), group(1, 3)
    sizes = dict(batch + m + n + k)
    if small:
        sizes[k[0][0]] = draw(st.sampled_from([65536, 70001, 131072]))
    elif draw(st.booleans()):  # one long K mode (split-K)
        sizes[k[0][0]] = draw(st.sampled_from([256, 1024, 4100]))
    a = draw(st.permutations([l for l, _ in batch + m + k]))
    b = draw(st.permutations([l for l, _ in batch + k + n]))
    c = draw(st.permutations([l for l, _ in batch + m + n]))
    shapes = [tuple(sizes[l] for l in t) for t in (a, b)]
    assume(max(int(np.prod(s)) for s in shapes + [tuple(sizes[l] for l in c)]) <= 1 << (22 if small else 20))
    dtype = draw(st.sampled_from(["float32", "float64", "int32", "int64"]))
    strategy = draw(st.sampled_from([None, "gett", "gett"]))  # (the model gives small steps to reduce)
    return f"{''.join(a)},{''.join(b)}->{''.join(c)}", shapes, dtype, strategy, draw(st.integers(0, 2 ** 32 - 1))


@needs_emulator
@settings(max_examples=int(os.environ.get("EINC_FUZZ_N", "12")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(case=gemm_like())
def test_emulated_gemm_shaped_plans_match_numpy(case):
    """GEMM-shaped steps as the planner chooses them (skinny, smallmn, stream, split-K, the
    tiles), emitted for sm_80 (the fp32 kernels' fp64 tensor-core fragments are the GPU
    suite's), every step run on the emulator."""
    subs, shapes, dtype, strategy, seed = case
    rng = np.random.default_rng(seed)
    ops = [make(rng, s, dtype) for s in shapes]
    p = api.plan_for(subs, shapes, dtype, strategy=strategy, backend="cuda")
    got = emulate(p, ops, max_grid=2, arch="sm_80")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))
