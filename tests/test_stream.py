"""The stream kernel (short K, the output is the traffic: TCCG ccsd_t) on the CPU emulator of
the CUDA execution model, on NVRTC, in the plan and on the GPU.

The layouts pinned: ccsd_t's (swapped, tabled M and N, A K-fast, B N-fast), one group
tabled and the other strided, both operands
K-fast and both row-fast, a ragged K padded to 8, K = 2 and K = K_MAX, a tabled K, a batch
group, ragged M and N tiles; every emulated run has fewer blocks than tiles, so blocks walk
several tiles through both stages of the ring.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from einc import api
from einc.codegen.cuda import emit_stream
from einc.codegen.cuda.emit import emit_step
from einc.codegen.cuda.emit_stream import K_MAX, stream_applies

from oracle import assert_matches, summed_terms
from test_cuda_codegen import emulate, make, needs_emulator, ptxas

CCSD_T = ("amji,cbkm->kjicba", [(24, 24, 20, 24), (20, 20, 20, 24)])
# (subscripts, shapes, what it pins)
CASES = [
    ("amji,cbkm->kjicba", [(5, 24, 7, 12), (4, 3, 5, 24)], "ccsd_t's layout: swapped, tabled M and N"),
    ("ik,jk->ij", [(300, 20), (260, 20)], "both K-fast, K = 20 padded to 24, ragged tiles"),
    ("ki,kj->ij", [(9, 300), (9, 200)], "both row-fast, K = 9 padded to 16"),
    ("ik,kj->ij", [(200, 2), (2, 140)], "K = 2 (a K of 1 is no contraction)"),
    ("ik,kj->ij", [(130, K_MAX), (K_MAX, 150)], "K = K_MAX"),
    ("iab,jba->ij", [(140, 3, 5), (133, 5, 3)], "tabled K (two modes that do not merge)"),
    ("bik,bjk->bij", [(3, 130, 17), (3, 129, 17)], "a batch group"),
    ("abk,jk->baj", [(7, 30, 12), (150, 12)], "tabled M, strided N"),
    ("jk,abk->baj", [(150, 12), (7, 30, 12)], "strided M, tabled N"),
    # C's N table runs 0, 27, 54, 3, ...: a run of 4 whose first and last entries are 3 apart
    # but is no run (the store took it for one: 15 of 81 outputs wrong, found by hypothesis)
    ("abe,aecd->dbca", [(3, 3, 2), (3, 2, 3, 3)], "tabled C columns 3 apart at the ends of a non-run"),
]
IDS = [c[2] for c in CASES]


def _plan(subs, shapes):
    return api.plan_for(subs, shapes, "float32", backend="cuda", strategy="gett")


@needs_emulator
@pytest.mark.parametrize("subs,shapes,what", CASES, ids=IDS)
def test_emulated_stream_matches_numpy(subs, shapes, what):
    rng = np.random.default_rng(len(subs) + shapes[0][0])
    ops = [make(rng, s, "float32") for s in shapes]
    p = _plan(subs, shapes)
    k = emit_step(p, p.steps[-1], gett_tile="stream")
    assert k.name.startswith("einc_stream_") and k.smem > 0
    tiles = int(k.source.split(" blocks of 256 threads walking ")[1].split()[0])
    assert tiles > 2  # blocks walk several tiles (the grid is capped at 2)
    got = emulate(p, ops, max_grid=2, gett_tile="stream")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@st.composite
def short_k_contractions(draw):
    """A random two-operand contraction with K <= K_MAX: batch, M, N and K modes of random
    extents, each operand's and the output's labels in a random order (so any group may be
    tabled, either operand may be fast along its rows or K, C may be unit-stride along M)."""
    labels = iter("abcdefghij")
    group = lambda lo, hi, ext: [(next(labels), draw(st.integers(*ext))) for _ in range(draw(st.integers(lo, hi)))]
    batch, m, n = group(0, 1, (2, 3)), group(1, 2, (3, 40)), group(1, 2, (3, 40))  # up to 13 tile rows
    k = group(1, 2, (2, 9))
    ext = dict(batch + m + n + k)
    a = draw(st.permutations([l for l, _ in batch + m + k]))
    b = draw(st.permutations([l for l, _ in batch + k + n]))
    c = draw(st.permutations([l for l, _ in batch + m + n]))
    subs = f"{''.join(a)},{''.join(b)}->{''.join(c)}"
    return subs, [tuple(ext[l] for l in a), tuple(ext[l] for l in b)], draw(st.sampled_from(["m", "n"]))


@needs_emulator
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(short_k_contractions())
def test_emulated_stream_matches_numpy_on_random_short_k_contractions(case):
    """The differential backbone for this kernel: random layouts, either walking direction,
    two blocks walking every tile (each block several, both stages and all three slots)."""
    subs, shapes, along = case
    import os
    old = os.environ.get("EINC_STREAM_ALONG")
    os.environ["EINC_STREAM_ALONG"] = along
    try:
        p = _plan(subs, shapes)
        gemm = p.steps[-1]
        if gemm.strategy != "gett" or not stream_applies(gemm, [np.dtype("float32")] * 3, np.dtype("float32")):
            return  # (a K of 1 after the plan's merges, or no GEMM left)
        rng = np.random.default_rng(abs(hash(subs)) % 2 ** 32)
        ops = [make(rng, s, "float32") for s in shapes]
        got = emulate(p, ops, max_grid=2, gett_tile="stream")
        assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))
    finally:
        if old is None:
            os.environ.pop("EINC_STREAM_ALONG", None)
        else:
            os.environ["EINC_STREAM_ALONG"] = old


@needs_emulator
@pytest.mark.parametrize("along", ["m", "n"])
@pytest.mark.parametrize("subs,shapes,what", [CASES[0], CASES[6], CASES[8]], ids=[IDS[0], IDS[6], IDS[8]])
def test_emulated_stream_walks_either_way(monkeypatch, subs, shapes, what, along):
    """Tiles walked along M (B's panel resident) and along N (A's): each operand's stage
    flips only when its panel changes."""
    monkeypatch.setenv("EINC_STREAM_ALONG", along)
    rng = np.random.default_rng(11)
    ops = [make(rng, s, "float32") for s in shapes]
    p = _plan(subs, shapes)
    src = emit_step(p, p.steps[-1], gett_tile="stream").source
    assert f"tiles along {along.upper()} ({'B' if along == 'm' else 'A'} resident)" in src
    got = emulate(p, ops, max_grid=2, gett_tile="stream")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@needs_emulator
@pytest.mark.parametrize("lanes,ku", [("pairs", "8"), ("warps", "all")])
def test_emulated_stream_lane_orders_and_unrolling(monkeypatch, lanes, ku):
    """The A/B switches build kernels that still compute the contraction."""
    monkeypatch.setenv("EINC_STREAM_LANES", lanes)
    monkeypatch.setenv("EINC_STREAM_KU", ku)
    subs, shapes, _ = CASES[0]
    rng = np.random.default_rng(12)
    ops = [make(rng, s, "float32") for s in shapes]
    p = _plan(subs, shapes)
    src = emit_step(p, p.steps[-1], gett_tile="stream").source
    assert f"float, float, float, {dict(pairs=1, warps=2)[lanes]}, {8 if ku == '8' else 24}>" in src
    got = emulate(p, ops, max_grid=2, gett_tile="stream")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@pytest.mark.parametrize("subs,shapes,what", CASES + [(*CCSD_T, "ccsd_t")], ids=IDS + ["ccsd_t"])
def test_stream_compiles_for_sm90_without_spills(subs, shapes, what):
    p = _plan(subs, shapes)
    k = emit_step(p, p.steps[-1], gett_tile="stream")
    regs, st, ld, log = ptxas(k)
    assert 0 < regs <= 128 and st == 0 and ld == 0, log  # two blocks of 256 threads per SM


def test_the_plan_picks_stream_for_ccsd_t_and_explain_names_it():
    from einc.cost import explain_lines
    p = api.plan_for(*CCSD_T, "float32", backend="cuda")
    assert [s.config for s in p.steps] == [(("tile", "stream"),)]
    k = emit_step(p, p.steps[0])
    assert k.name.startswith("einc_stream_") and k.grid == (2 * 132, 1, 1)
    assert "A loads K-fast, B loads N-fast; operands swapped" in k.source
    assert "tiles along M (B resident)" in k.source  # amji, the kernel's B, gathers: a sector per element
    assert "stream 128x128" in explain_lines(p)[0][0]


def test_the_plan_keeps_other_kernels_where_stream_does_not_apply_or_pay(monkeypatch):
    subs, shapes = CCSD_T
    for dtype in ("float64", "int32"):  # not fp32 or 16-bit: the tiled kernels
        p = api.plan_for(subs, shapes, dtype, backend="cuda")
        assert all(("tile", "stream") not in s.config for s in p.steps), dtype
    for subs2, shapes2 in [("ij,jk->ik", [(2048, 2048), (2048, 2048)]),  # a long K
                           ("ik,jk->ij", [(300, 20), (260, 20)]),  # too few tiles
                           ("ik,jk->ij", [(8000, 33), (8000, 33)])]:  # K = 33 > K_MAX
        p = api.plan_for(subs2, shapes2, "float32", backend="cuda")
        assert all(("tile", "stream") not in s.config for s in p.steps), subs2
    monkeypatch.setenv("EINC_STREAM", "0")
    p = api.plan_for(subs, shapes, "float32", backend="cuda")
    assert all(("tile", "stream") not in s.config for s in p.steps)
    monkeypatch.setenv("EINC_STREAM", "1")  # forced: wherever it applies
    p = api.plan_for("ik,jk->ij", [(300, 20), (260, 20)], "float32", backend="cuda", strategy="gett")
    assert p.steps[-1].config == (("tile", "stream"),)


# tensor-core variant (stream_mma.cuh): fp16/bf16, no CPU emulator (inline PTX)
MMA_CASES = [
    ("amji,cbkm->kjicba", [(5, 24, 7, 12), (4, 3, 5, 24)], "ccsd_t's layout"),
    ("ik,jk->ij", [(300, 24), (260, 24)], "both K-major, 16-byte pieces, ragged tiles"),
    ("ki,kj->ij", [(40, 300), (40, 200)], "both MN-major (ldmatrix.trans), K = 40 padded to 48"),
    ("ik,jk->ij", [(300, 13), (260, 13)], "K = 13: element loads"),
    ("ik,kj->ij", [(130, 64), (64, 150)], "K = K_MAX_MMA, A K-major, B N-major"),
    ("bik,bjk->bij", [(3, 130, 8), (3, 129, 8)], "a batch group, one k-step"),
    ("abk,jk->baj", [(7, 30, 16), (150, 16)], "tabled M, strided N"),
]
MMA_IDS = [c[2] for c in MMA_CASES]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("subs,shapes,what", MMA_CASES + [(*CCSD_T, "ccsd_t")], ids=MMA_IDS + ["ccsd_t"])
def test_stream_mma_compiles_for_sm90_without_spills(monkeypatch, subs, shapes, what, dtype):
    monkeypatch.setattr("einc.codegen.cuda.emit_mma.MIN_WORK", 0)  # tensor cores at these sizes
    blocks = 2
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    k = emit_step(p, p.steps[-1], gett_tile="stream")
    assert k.name.startswith("einc_stream_mma_") and "mma.sync" in k.source
    assert f"__launch_bounds__(256, {blocks})" in k.source
    for kern in (k, k.fallback) if k.fallback is not None else (k,):
        regs, st, ld, log = ptxas(kern)
        assert 0 < regs <= 65536 // (256 * blocks) and st == 0 and ld == 0, log
        assert kern.smem <= 227 * 1024 // blocks  # that many blocks per SM


def test_the_plan_picks_stream_mma_for_bf16_ccsd_t():
    from einc.cost import explain_lines
    p = api.plan_for(*CCSD_T, "bfloat16", backend="cuda")
    assert p.steps[-1].config == (("tile", "stream"),)
    assert "stream_mma 100x120 tiles, C by TMA boxes" in explain_lines(p)[0][-1]
    k = emit_step(p, p.steps[-1])
    assert k.name.startswith("einc_stream_mma_") and k.grid == (2 * 132, 1, 1)
    assert "tiles along N (A resident)" in k.source and k.fallback is not None  # a tie: along C's unit stride


def test_stream_copy_switch_reads_ccsd_t_in_place(monkeypatch):
    """EINC_STREAM_COPY=0 (an A/B switch): no transpose step; the kernel gathers amji with its
    panel resident (along M) and still compiles for sm_90 without spills."""
    assert [s.strategy for s in api.plan_for(*CCSD_T, "bfloat16", backend="cuda").steps] == ["reduce", "gett"]
    monkeypatch.setenv("EINC_STREAM_COPY", "0")
    p = api.plan_for(*CCSD_T, "bfloat16", backend="cuda")
    assert [s.strategy for s in p.steps] == ["gett"] and p.steps[0].config == (("tile", "stream"),)
    k = emit_step(p, p.steps[0])
    assert "tiles along M (B resident)" in k.source
    regs, st, ld, log = ptxas(k)
    assert 0 < regs <= 128 and st == 0 and ld == 0, log


def test_stream_applies_only_to_short_k_fp32():
    p = _plan("ik,jk->ij", [(300, 20), (260, 20)])
    f32 = [np.dtype("float32")] * 3
    assert stream_applies(p.steps[-1], f32, f32[0])
    assert not stream_applies(p.steps[-1], [np.dtype("float64")] * 3, np.dtype("float64"))
    bf = [np.dtype("bfloat16")] * 3
    assert stream_applies(_plan("ik,jk->ij", [(3000, 64), (2600, 64)]).steps[-1], bf, f32[0])
    assert not stream_applies(_plan("ik,jk->ij", [(3000, 65), (2600, 65)]).steps[-1], bf, f32[0])
    assert not stream_applies(p.steps[-1], [np.dtype("float32")] + bf[1:], f32[0])  # fp32 out of bf16: tiled
    p = _plan("ik,jk->ij", [(300, K_MAX + 1), (260, K_MAX + 1)])
    assert not stream_applies(p.steps[-1], f32, f32[0])
    p = _plan("abik,bajk->abij", [(2, 3, 130, 9), (3, 2, 70, 9)])  # a tabled batch: left to gett
    assert not stream_applies(p.steps[-1], f32, f32[0])
    assert stream_applies(_plan("bik,bjk->bij", [(3, 130, 9), (3, 129, 9)]).steps[-1], f32, f32[0])


def test_einc_tune_offers_stream():
    from einc.tune import candidates, plan_with
    from einc.tuned import Choice
    _, t = plan_with(*CCSD_T, "float32")
    assert Choice("gett", "stream", 1) in candidates(t, 0)
    p, _ = plan_with(*CCSD_T, "float32", {0: Choice("gett", "128x128x8", 1)})
    assert all(("tile", "stream") not in s.config for s in p.steps)  # a tuned pick overrides the rule


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes,what", CASES, ids=IDS)
def test_gpu_stream_matches_numpy(monkeypatch, subs, shapes, what):
    import einc
    monkeypatch.setenv("EINC_STREAM", "1")
    rng = np.random.default_rng(7)
    ops = [make(rng, s, "float32") for s in shapes]
    p = _plan(subs, shapes)
    assert p.steps[-1].config == (("tile", "stream"),)
    got = einc.einsum(subs, *ops, backend="cuda", strategy="gett")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@pytest.mark.gpu
def test_gpu_stream_on_ccsd_t_views_and_the_target(monkeypatch):
    import einc
    subs, shapes = CCSD_T
    rng = np.random.default_rng(8)
    a, b = (make(rng, s, "float32") for s in shapes)
    out = np.full((20, 20, 24, 20, 20, 24), np.nan, dtype="float32")
    got = einc.einsum(subs, a, b, backend="cuda", out=out)
    assert api.plan_for(subs, shapes, "float32", backend="cuda").steps[0].config == (("tile", "stream"),)
    assert_matches(got, subs, a, b, terms=24)
    monkeypatch.setenv("EINC_STREAM", "1")
    big = make(rng, (24, 24, 20, 48), "float32")[:, :, :, ::2]  # strided A: no unit stride
    got = einc.einsum(subs, big, b, backend="cuda")
    assert_matches(got, subs, big, b, terms=24)


_EPS16 = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _check16(subs, ops, dtype, out=None):
    """einc on 16-bit torch tensors (output NaN-poisoned) against numpy's float64 einsum of
    the same values: fp32 accumulation over the terms plus one rounding to the dtype."""
    import einc
    import torch
    host = [o.float().cpu().numpy().astype(np.float64) for o in ops]
    ref = np.einsum(subs, *host, optimize=True)
    absref = np.abs(np.einsum(subs, *[np.abs(h) for h in host], optimize=True))
    out = torch.full(ref.shape, float("nan"), dtype=getattr(torch, dtype), device="cuda")
    assert einc.einsum(subs, *ops, out=out, backend="cuda", strategy="gett") is out
    got = out.float().cpu().numpy().astype(np.float64)
    lhs, rhs = subs.split("->")
    ext = {l: n for t, o in zip(lhs.split(","), ops) for l, n in zip(t, o.shape)}
    terms = max(1, int(np.prod([n for l, n in ext.items() if l not in rhs])))
    tol = (2.0 ** -23 * (terms + 2) * 4 + _EPS16[dtype]) * absref + 1e-30
    assert not np.isnan(got).any(), "unwritten (poisoned) outputs"
    err = np.abs(got - ref)
    assert (err <= tol).all(), f"max error {err.max()} at {np.argwhere(err > tol)[:3]}"


def _t16(shape, dtype, seed, pad=0):
    import torch
    gen = torch.Generator().manual_seed(seed)
    flat = torch.randn(int(np.prod(shape)) + pad, generator=gen).to(getattr(torch, dtype)).cuda()
    return flat[pad:].view(shape)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("subs,shapes,what", MMA_CASES, ids=MMA_IDS)
def test_gpu_stream_mma_matches_numpy(monkeypatch, subs, shapes, what, dtype):
    monkeypatch.setenv("EINC_STREAM", "1")
    monkeypatch.setattr("einc.codegen.cuda.emit_mma.MIN_WORK", 0)  # tensor cores at these sizes
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    assert p.steps[-1].config == (("tile", "stream"),)
    assert emit_step(p, p.steps[-1]).name.startswith("einc_stream_mma_")
    _check16(subs, [_t16(s, dtype, i + len(subs)) for i, s in enumerate(shapes)], dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("along", ["m", "n"])
def test_gpu_stream_mma_ccsd_t_either_way_misaligned_and_strided(monkeypatch, along):
    monkeypatch.setenv("EINC_STREAM_ALONG", along)
    subs, shapes = CCSD_T
    a, b = _t16(shapes[0], "bfloat16", 1), _t16(shapes[1], "bfloat16", 2)
    _check16(subs, [a, b], "bfloat16")
    b1 = _t16(shapes[1], "bfloat16", 3, pad=1)  # one element past 16-byte alignment: the twin
    assert b1.data_ptr() % 16 == 2
    _check16(subs, [a, b1], "bfloat16")
    monkeypatch.setenv("EINC_STREAM", "1")
    big = _t16((24, 24, 20, 48), "bfloat16", 4)[:, :, :, ::2]  # strided A: no unit stride
    _check16(subs, [big, b], "bfloat16")


LONG_K_CASES = [
    ("ap,srqp->srqa", [(96, 96), (5, 7, 9, 96)], "ao2mo's layout, K = 96, N = 96 resident"),
    ("ik,kj->ij", [(300, 120), (120, 70)], "K = 120, B N-major, ragged"),
    ("ki,kj->ij", [(100, 130), (100, 200)], "both MN-major, K = 100"),
]


@pytest.mark.parametrize("subs,shapes,what", LONG_K_CASES, ids=[c[2] for c in LONG_K_CASES])
def test_stream_mma_past_k64_takes_one_block_per_sm_without_spills(monkeypatch, subs, shapes, what):
    monkeypatch.setenv("EINC_STREAM_MMA_KMAX", "128")
    monkeypatch.setattr("einc.codegen.cuda.emit_mma.MIN_WORK", 0)
    p = api.plan_for(subs, shapes, "bfloat16", backend="cuda", strategy="gett")
    k = emit_step(p, p.steps[-1], gett_tile="stream")
    assert "__launch_bounds__(256, 1)" in k.source and k.grid[0] <= 132
    regs, st, ld, log = ptxas(k)
    assert st == 0 and ld == 0, log
    monkeypatch.delenv("EINC_STREAM_MMA_KMAX")
    assert not stream_applies(p.steps[-1], [np.dtype("bfloat16")] * 3, np.dtype("float32"))


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes,what", LONG_K_CASES, ids=[c[2] for c in LONG_K_CASES])
def test_gpu_stream_mma_past_k64_matches_numpy(monkeypatch, subs, shapes, what):
    monkeypatch.setenv("EINC_STREAM", "1")
    monkeypatch.setenv("EINC_STREAM_MMA_KMAX", "128")
    monkeypatch.setattr("einc.codegen.cuda.emit_mma.MIN_WORK", 0)
    p = api.plan_for(subs, shapes, "bfloat16", backend="cuda", strategy="gett")
    assert p.steps[-1].config == (("tile", "stream"),)
    _check16(subs, [_t16(s, "bfloat16", i + 3) for i, s in enumerate(shapes)], "bfloat16")


# C stored by TMA boxes (cbox.py; sm_90, C's rows tabled): ccsd_t's three such layouts at a
# smaller j and k, and a batch; the tile is cut to C's modes (120 x 120, 100 x 96)
BOX_SIZES = dict(a=24, b=20, c=20, i=24, j=2, k=3, m=24)
BOX_CASES = ["bmji,cakm->kjicba", "amji,cbkm->kjicba", "bmki,cajm->kjicba", "zbmji,zcakm->zkjicba"]


def _box_shapes(subs):
    sizes = dict(BOX_SIZES, z=2)
    return [tuple(sizes[l] for l in t) for t in subs.split("->")[0].split(",")]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("subs", BOX_CASES)
def test_stream_mma_stores_ccsd_t_by_boxes_and_compiles_without_spills(subs, dtype):
    shapes = _box_shapes(subs)
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    k = emit_step(p, p.steps[-1], gett_tile="stream")
    assert k.tmaps and k.tmaps[0].swizzle == "NONE" and k.tmaps[0].ptr == 0 and k.aligned[0] == 0
    assert "stored by TMA (cp.async.bulk.tensor, one thread)" in k.source and "EincTmap cm" in k.source
    assert k.fallback is not None and not k.fallback.tmaps  # a misaligned C: the threads' stores
    assert k.key[-1][:2] in ((120, 120), (100, 96))  # (rows of whole sectors: 96 of 120)
    assert emit_step(p, p.steps[-1], "sm_80", gett_tile="stream").tmaps == ()  # no bulk tensor copies there
    for kern in (k, k.fallback):
        regs, st, ld, log = ptxas(kern)
        assert 0 < regs <= 128 and st == 0 and ld == 0, log
        assert kern.smem <= 227 * 1024 // 2


def test_stream_box_switch_and_strided_rows(monkeypatch):
    """cmji: C's rows one strided mode (the threads' 16-byte runs measured faster there)."""
    p = api.plan_for("cmji,bakm->kjicba", [(20, 24, 20, 24), (20, 24, 20, 24)], "bfloat16", backend="cuda")
    assert [s.strategy for s in p.steps] == ["reduce", "gett"]  # cmji copied to jicm: M one mode
    k = emit_step(p, p.steps[-1], gett_tile="stream")
    assert not k.tmaps and "C staged per warp for 16-byte stores" in k.source
    monkeypatch.setattr(emit_stream, "BOX_STORE", False)
    p = api.plan_for(*CCSD_T, "bfloat16", backend="cuda")
    k = emit_step(p, p.steps[-1])
    assert not k.tmaps and "C staged per warp for 16-byte stores" in k.source


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("subs", BOX_CASES)
def test_gpu_stream_mma_stores_c_by_boxes(monkeypatch, subs, dtype):
    """Three blocks walk every tile (both staging boxes, every ring slot, a store in flight
    while the next tile is staged); the output is NaN-poisoned; then C 2 bytes past 16-byte
    alignment takes the threads' store twin."""
    import torch
    import einc
    monkeypatch.setenv("EINC_STREAM", "1")
    monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", 3 if dtype == "bfloat16" else 5)
    shapes = _box_shapes(subs)
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    k = emit_step(p, p.steps[-1])
    assert p.steps[-1].config == (("tile", "stream"),) and k.tmaps and k.grid[0] <= 10
    ops = [_t16(s, dtype, i + len(subs)) for i, s in enumerate(shapes)]
    _check16(subs, ops, dtype)
    want = einc.einsum(subs, *ops, backend="cuda")
    flat = torch.full((want.numel() + 1,), float("nan"), dtype=want.dtype, device="cuda")
    out = flat[1:].view(want.shape)
    einc.einsum(subs, *ops, out=out, backend="cuda")
    assert torch.equal(out, want)


@pytest.mark.gpu
@pytest.mark.parametrize("order", [(0, 1, 2, 3, 4, 5), (1, 0, 2, 3, 5, 4), (2, 0, 1, 3, 4, 5)])
def test_gpu_stream_mma_boxes_into_permuted_and_strided_outputs(monkeypatch, order):
    """out= a permuted view of a buffer (C's strides not C-order: the boxes follow them, or the
    threads' stores take over where they do not fit) and a view with every other element
    (no unit stride: the threads' stores); NaN-poisoned, checked against float64 numpy."""
    import torch
    import einc
    monkeypatch.setenv("EINC_STREAM", "1")
    monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", 3)
    subs = "bmji,cakm->kjicba"
    shapes = _box_shapes(subs)
    ops = [_t16(s, "bfloat16", i + 40) for i, s in enumerate(shapes)]
    host = [o.float().cpu().numpy().astype(np.float64) for o in ops]
    ref = np.einsum(subs, *host)
    base = torch.full(tuple(ref.shape[i] for i in order), float("nan"), dtype=torch.bfloat16, device="cuda")
    out = base.permute(*np.argsort(order).tolist())
    assert out.shape == ref.shape
    einc.einsum(subs, *ops, out=out, backend="cuda")
    got = out.float().cpu().numpy()
    assert not np.isnan(got).any() and np.allclose(got, ref, rtol=2 ** -7, atol=2 ** -6 * np.abs(ref).max())
    wide = torch.full(ref.shape[:-1] + (2 * ref.shape[-1],), float("nan"), dtype=torch.bfloat16, device="cuda")
    einc.einsum(subs, *ops, out=wide[..., ::2], backend="cuda")
    got = wide[..., ::2].float().cpu().numpy()
    assert not np.isnan(got).any() and np.allclose(got, ref, rtol=2 ** -7, atol=2 ** -6 * np.abs(ref).max())
    assert torch.isnan(wide[..., 1::2]).all()  # nothing written between
