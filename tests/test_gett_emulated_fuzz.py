"""Random layouts through the SIMT gett kernel on the CPU emulator of the CUDA execution
model: batch, M, N and K groups of one or two modes each, every operand's and the output's
labels in a random order (so any group may be tabled, any operand M-, N- or K-fast, C
unit-stride along any group), ragged extents, each gett tile. The stream kernel's twin of
this test (test_stream.py) found the tabled-column store's false runs; this one holds the
gett tiles' loads and stores to the same standard."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from einc import api
from einc.codegen.cuda.emit import emit_step

from oracle import assert_matches, summed_terms
from test_cuda_codegen import emulate, make, needs_emulator


@st.composite
def contractions(draw):
    labels = iter("abcdefghij")
    group = lambda lo, hi, ext: [(next(labels), draw(st.integers(*ext))) for _ in range(draw(st.integers(lo, hi)))]
    batch, m, n, k = group(0, 1, (2, 3)), group(1, 2, (2, 24)), group(1, 2, (2, 24)), group(1, 2, (2, 20))
    ext = dict(batch + m + n + k)
    a = draw(st.permutations([l for l, _ in batch + m + k]))
    b = draw(st.permutations([l for l, _ in batch + k + n]))
    c = draw(st.permutations([l for l, _ in batch + m + n]))
    subs = f"{''.join(a)},{''.join(b)}->{''.join(c)}"
    dtype = draw(st.sampled_from(["float32", "float64"]))
    return subs, [tuple(ext[l] for l in t) for t in (a, b)], dtype


@needs_emulator
@pytest.mark.parametrize("tile", ["128x128x8", "64x64x8", "128x128x16"])
@settings(max_examples=int(__import__("os").environ.get("EINC_FUZZ_N", "10")), deadline=None, suppress_health_check=list(HealthCheck))
@given(case=contractions())
def test_emulated_gett_matches_numpy_on_random_layouts(tile, case):
    subs, shapes, dtype = case
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    step = p.steps[-1]
    if step.strategy != "gett":
        return  # (the plan's merges left no GEMM)
    k = emit_step(p, step, gett_tile=tile)
    if not k.name.startswith("einc_gett_"):
        return  # (the tile does not take this dtype: 128x128x16 is 4-byte only)
    rng = np.random.default_rng(abs(hash((subs, tuple(shapes)))) % 2 ** 32)
    ops = [make(rng, s, dtype) for s in shapes]
    got = emulate(p, ops, max_grid=2, gett_tile=tile)
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))
