"""fp32 gett on the fp64 tensor cores (gett_dm.cuh's DM tiles) against numpy on the GPU.

The DM tiles are opt-in (`einc tune` measures them; EINC_GETT_BIG_TILE forces them), so the
default suites rarely run them: here every DM tile runs the layouts its loads and stores
branch on -- ragged M, N and K, K-fast and M/N-fast operands, tabled groups, the swapped
C^T = B^T A^T, a batch, K = 0 -- into poisoned outputs, and must leave the rest untouched.
CI compiles and emulates them (tests/test_cuda_codegen.py); this file launches them.
"""
from __future__ import annotations

import numpy as np
import pytest

import einc
import einc.api
from einc.codegen.cuda import emit
from einc.codegen.cuda.emit import DM_TILES
from oracle import assert_matches, random_operand, summed_terms

CASES = [
    ("ij,jk->ik", [(200, 70), (70, 150)]),            # ragged, the ring wraps
    ("ij,jk->ik", [(300, 1000), (1000, 260)]),        # many slices, partial tiles
    ("ik,kj->ij", [(140, 300), (300, 150)]),          # A K-fast (vector runs)
    ("ik,jk->ij", [(133, 96), (65, 96)]),             # both K-fast
    ("ji,jk->ik", [(190, 140), (190, 134)]),          # M/N runs
    ("ij,jk->ki", [(300, 210), (210, 19)]),           # swapped, N odd
    ("kaxb,kxcd->abcd", [(21, 3, 2, 13), (21, 2, 4, 7)]),  # tabled M, N, K runs
    ("lki,jl->kji", [(96, 20, 24), (36, 96)]),        # TCCG ccsd ijk-ikl-lj, small
    ("bij,bjk->bik", [(3, 70, 90), (3, 90, 50)]),     # batch
    ("ij,jk->ik", [(70, 0), (0, 50)]),                # K = 0: zeros
]


def force(monkeypatch, tile):
    """Every gett step of the plans built from here on runs on ``tile``; returns the keys of
    the gett kernels emitted, so a test can tell that the DM kernel is what ran."""
    seen = []
    orig = emit._emit_gett

    def forced(step, dtypes, compute, t=None, arch="sm_90"):
        k = orig(step, dtypes, compute, tile, arch)
        seen.append(k.key)
        return k
    monkeypatch.setattr(emit, "_emit_gett", forced)
    einc.api._EXECUTABLES.clear()
    return seen


@pytest.mark.parametrize("subs,shapes", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_case_plans_a_dm_gett_step(monkeypatch, subs, shapes):
    seen = force(monkeypatch, "128x128x16d")
    p = einc.api.plan_for(subs, shapes, "float32", backend="cuda", strategy="gett")
    for step in p.steps:
        emit.emit_step(p, step)
    assert seen and all(k[-1] == "dm" for k in seen), seen
    einc.api._EXECUTABLES.clear()


@pytest.mark.gpu
@pytest.mark.parametrize("tile", list(DM_TILES))
@pytest.mark.parametrize("subs,shapes", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_gpu_dm_tile_matches_numpy(monkeypatch, tile, subs, shapes):
    seen = force(monkeypatch, tile)
    rng = np.random.default_rng(len(subs) * 7 + len(tile))
    ops = [random_operand(rng, s, np.float32) for s in shapes]
    want_shape = np.einsum(subs, *[np.zeros(s, np.float32) for s in shapes]).shape
    size = int(np.prod(want_shape))
    buf = np.full((size + 64,), np.nan, np.float32)
    out = buf[32:32 + size].reshape(want_shape)
    einc.einsum(subs, *ops, out=out, backend="cuda", strategy="gett")
    assert seen and all(k[-1] == "dm" for k in seen), seen
    assert_matches(out, subs, *ops, terms=summed_terms(subs, shapes))
    assert np.isnan(buf[:32]).all() and np.isnan(buf[32 + size:]).all()
    einc.api._EXECUTABLES.clear()
