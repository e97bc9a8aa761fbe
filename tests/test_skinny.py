"""The skinny kernel (small N or M group: TCCG's intensli shape) on the CPU emulator of
the CUDA execution model, on NVRTC, and on the GPU when one is present.

Every layout variant of kernels/skinny.cuh is pinned: lanes on A's unit stride with C
staged through shared memory, lanes on C's unit stride with A K-fast, one-axis boxes,
tabled K, a batch in the rest table, the small group on the M side (swapped operands),
ragged tiles, K = 0, K longer than one B chunk, the converting register path, a ragged X
folded with a second M mode (x2), and a last wave of tiles run as two halves each.
"""

import numpy as np
import pytest

from einc import api
from einc.codegen.cuda.emit import emit_step
from einc.codegen.cuda.emit_skinny import skinny_layout

from oracle import assert_matches, summed_terms
from test_cuda_codegen import emulate, make, needs_emulator, ptxas

# (subscripts, shapes, dtype, what it pins)
CASES = [
    ("akb,jk->jba", [(40, 9, 70), (24, 9)], "float32", "A M-fast on b, C staged along a"),
    ("abk,kj->bja", [(37, 20, 19), (19, 24)], "float32", "A K-fast: lanes on C's a"),
    ("akdbc,jk->cjbda", [(5, 7, 3, 4, 33), (17, 7)], "float64", "rest table d, staged, ragged"),
    ("ik,kj->ij", [(700, 13), (13, 8)], "float32", "one axis, C N-fast: rows staged per warp"),
    ("ik,kj->ji", [(700, 13), (13, 8)], "float32", "one axis, C M-fast: direct stores"),
    ("ik,kj->ij", [(700, 300), (300, 5)], "float32", "K over three B chunks, N = 5 of NP = 8 staged"),
    ("abk,kj->baj", [(37, 20, 19), (19, 24)], "float32", "two axes, C N-fast: rows staged per warp"),
    ("ki,kj->ij", [(13, 1100), (13, 24)], "float32", "A M-fast, C N-fast: rows staged per warp"),
    ("ik,kj->ij", [(300, 12), (12, 16)], "float64", "fp64 rows staged per warp"),
    ("bik,bkj->bij", [(3, 70, 20), (3, 20, 20)], "float32", "batch in the rest table moves B"),
    ("jk,akb->jba", [(24, 9), (40, 9, 70)], "float32", "small group on the M side: swapped"),
    ("akbc,jkc->jba", [(40, 5, 70, 3), (24, 5, 3)], "float32", "tabled K (two modes)"),
    ("akb,jk->jba", [(40, 9, 70), (24, 9)], "float16", "converting register path, staged"),
    ("abk,kj->bja", [(37, 20, 19), (19, 24)], "int8", "int8 wraps in int32, K-fast"),
    ("akb,jk->jba", [(40, 0, 70), (24, 0)], "float32", "K = 0 gives zeros"),
    ("akb,jk->jba", [(40, 9, 70), (32, 9)], "int64", "NP = 32, 8-byte async path"),
    ("akdbc,jk->cjbda", [(5, 7, 3, 4, 48), (24, 7)], "float32", "X = c = 48 folds in b: 192 lanes"),
    ("cabk,kj->cjba", [(6, 20, 7, 9), (9, 24)], "float32", "A K-fast, X = a = 20 folds in a mode"),
    ("akdbc,jk->cjbda", [(5, 7, 3, 4, 50), (24, 7)], "float32", "X = c = 50: 16-byte pieces, no fold"),
]
IDS = [c[3] for c in CASES]
# fp32 cases with two rows per thread (M-fast and K-fast A) and tiles enough for a last,
# partial wave, where that wave runs as halves
TAIL = [c for c in CASES if c[2] == "float32" and c[3] in (
    "A M-fast on b, C staged along a", "A M-fast, C N-fast: rows staged per warp", "small group on the M side: swapped",
    "tabled K (two modes)", "X = c = 48 folds in b: 192 lanes")] + [
    ("abk,kj->bja", [(37, 40, 19), (19, 24)], "float32", "A K-fast, lanes on C's a, 6 tiles"),
    ("ik,kj->ij", [(1100, 13), (13, 8)], "float32", "A K-fast, one axis, C N-fast"),
    ("cabk,kj->cjba", [(12, 20, 7, 9), (9, 24)], "float32", "A K-fast, X = a = 20 folded"),
]
RM4 = [c for c in CASES if c[3] in ("A M-fast on b, C staged along a", "small group on the M side: swapped",  # fp32,
                                    "tabled K (two modes)", "A M-fast, C N-fast: rows staged per warp")]  # A M-fast


def _plan(subs, shapes, dtype):
    return api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", CASES, ids=IDS)
def test_emulated_skinny_matches_numpy(subs, shapes, dtype, what):
    rng = np.random.default_rng(len(subs) * 7 + len(IDS))
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    assert skinny_layout(p.steps[-1], 1) is not None
    got = emulate(p, ops, max_grid=2, gett_tile="skinny")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


def _tail(monkeypatch, mode, p):
    """Tile schedule: as emitted (a few tiles: all as halves), 'whole' (no halves), or
    'mixed' (as few SMs as leave a last, partial wave: whole tiles first, then halves)."""
    from einc.codegen.cuda import emit_skinny
    if mode == "whole":
        monkeypatch.setenv("EINC_SKINNY_TAIL", "0")
    elif mode == "mixed":
        # halves run RM / 2 rows: two-row kernels only (the K-fast fp64 fragments default to one)
        monkeypatch.setenv("EINC_SKINNY_KFAST_RM", "2")
        for sms in range(1, 64):
            monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", sms)
            tiles, whole = _words(p)
            if 0 < whole < tiles:
                return
        raise AssertionError("no SM count gives a partial last wave")


def _words(p):
    k = emit_step(p, p.steps[-1], gett_tile="skinny")
    tiles = k.words[4] * k.words[5] * k.words[6]
    return tiles, k.words[17]  # tiles, of them run whole


@needs_emulator
@pytest.mark.parametrize("mode", ["whole", "mixed"])
@pytest.mark.parametrize("subs,shapes,dtype,what", TAIL, ids=[c[3] for c in TAIL])
def test_emulated_skinny_tile_schedules(monkeypatch, subs, shapes, dtype, what, mode):
    rng = np.random.default_rng(5)
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    _tail(monkeypatch, mode, p)
    tiles, whole = _words(p)
    assert whole == tiles if mode == "whole" else 0 < whole < tiles
    got = emulate(p, ops, max_grid=2, gett_tile="skinny")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


def test_k_fast_fragments_take_one_row_per_thread_and_two_blocks(monkeypatch):
    """K-fast A on the fp64 fragments: one row per thread (116 registers: two blocks per SM);
    the FFMA rows (no fp64 tensor cores) keep two rows and their halves."""
    from einc.codegen.cuda import emit_skinny
    p = api.plan_for("abk,kj->bja", [(384, 376, 384), (384, 24)], "float32", backend="cuda")
    k = emit_step(p, p.steps[0], "sm_90")
    assert "EincSkinnyTile<24, 1, " in k.source and "__launch_bounds__(256, 2)" in k.source
    assert "fp64 tensor cores" in k.source.split("\n\n")[0]
    k = emit_step(p, p.steps[0], "sm_86")
    assert "EincSkinnyTile<24, 2, " in k.source and "fp64 tensor cores" not in k.source.split("\n\n")[0]
    monkeypatch.setenv("EINC_SKINNY_KFAST_RM", "2")
    k = emit_step(p, p.steps[0], "sm_90")
    assert "EincSkinnyTile<24, 2, " in k.source and "__launch_bounds__(256, 1)" in k.source


def test_ragged_x_folds_a_second_mode_and_fills_the_lanes():
    p = api.plan_for("akdbc,jk->cjbda", [(48, 48, 36, 36, 48), (24, 48)], "float32", backend="cuda")
    lay = skinny_layout(p.steps[0])
    assert lay.x[0] == 48 and lay.x2 is not None and (48 * lay.x2[0]) % 32 == 0
    k = emit_step(p, p.steps[0])
    assert k.words[14] == 48 and k.words[0] == 48 * lay.x2[0]  # u0 = 48, flat U
    p = _plan("akdbc,jk->cjbda", [(5, 7, 3, 4, 50), (24, 7)], "float32")
    k = emit_step(p, p.steps[0], gett_tile="skinny")
    assert skinny_layout(p.steps[0], 1).x2 is not None and k.words[14] == k.words[0] == 50  # pieces: unfolded
    p = api.plan_for("akb,jk->jba", [(384, 384, 384), (24, 384)], "float32", backend="cuda")
    assert skinny_layout(p.steps[0]).x2 is None  # X = 384 fills its lanes already
    tiles, whole = _words(p)
    assert (tiles, whole) == (288, 264)  # 24 tiles past the 264 resident blocks: 48 halves


@pytest.mark.parametrize("subs,shapes,dtype,what", CASES, ids=IDS)
def test_skinny_compiles_without_spills_in_the_async_fp32_path(subs, shapes, dtype, what):
    p = _plan(subs, shapes, dtype)
    k = emit_step(p, p.steps[-1], gett_tile="skinny")
    assert k.name.startswith("einc_skinny_")
    regs, st, ld, log = ptxas(k)
    dm = "fp64 tensor cores" in k.source.split("\n\n")[0]  # (one block per SM: 255 registers)
    assert 0 < regs <= 128 if dtype in ("float32", "int8", "float16") and not dm else regs <= 255
    if dtype == "float32":
        assert st == 0 and ld == 0, log


KFAST32 = [c for c in CASES + TAIL if c[2] == "float32" and "K-fast" in c[3] and "N-fast" not in c[3]]


def test_fp32_k_fast_steps_take_the_fp64_fragments(monkeypatch):
    """fp32, A K-fast with C stored per row or M-fast through the 16-byte ring: fragments (K-fast:
    one row per thread); C N-fast, other types, or DMMA off: FFMA rows (two rows)."""
    from einc.codegen.cuda import emit_skinny
    for subs, shapes, dtype, what in KFAST32 + [c for c in CASES if c[3] == "int8 wraps in int32, K-fast"]:
        p = _plan(subs, shapes, dtype)
        k = emit_step(p, p.steps[-1], gett_tile="skinny")
        head = k.source.split("\n\n")[0]
        assert ("fp64 tensor cores" in head) == (dtype == "float32"), what
        assert ("1 row(s) per thread" in head) == (dtype == "float32") != ("2 row(s) per thread" in head), what
    p = _plan("ik,kj->ij", [(1100, 13), (13, 8)], "float32")  # C N-fast (staged per warp): FFMA rows
    assert "fp64 tensor cores" not in emit_step(p, p.steps[-1], gett_tile="skinny").source.split("\n\n")[0]
    head = lambda subs, shapes: emit_step(p := _plan(subs, shapes, "float32"), p.steps[-1],
                                          gett_tile="skinny").source.split("\n\n")[0]
    # M-fast through the 16-byte ring, C staged: fragments for few tiles (TCCG akb: 288), FFMA
    # rows for many (akbc: 1512), either way when forced
    assert "fp64 tensor cores" in head("akb,jk->jba", [(384, 384, 384), (24, 384)])
    assert "fp64 tensor cores" not in head("akbc,jk->cjba", [(96, 96, 84, 96), (24, 96)])
    monkeypatch.setenv("EINC_SKINNY_DMMA_MFAST", "1")
    assert "fp64 tensor cores" in head("akbc,jk->cjba", [(96, 96, 84, 96), (24, 96)])
    monkeypatch.setenv("EINC_SKINNY_DMMA_MFAST", "0")
    assert "fp64 tensor cores" not in head("akb,jk->jba", [(384, 384, 384), (24, 384)])
    monkeypatch.setattr(emit_skinny, "DMMA", False)
    p = _plan(*KFAST32[0][:3])
    assert "fp64 tensor cores" not in emit_step(p, p.steps[-1], gett_tile="skinny").source.split("\n\n")[0]


FP32 = [c for c in CASES + TAIL[-3:] if c[2] == "float32"]


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", FP32, ids=[c[3] for c in FP32])
def test_emulated_ffma_rows(monkeypatch, subs, shapes, dtype, what):
    """EINC_SKINNY_DMMA=0: fp32 steps on the per-thread FFMA rows (GPUs before sm_90)."""
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setattr(emit_skinny, "DMMA", False)
    rng = np.random.default_rng(8)
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    got = emulate(p, ops, max_grid=2, gett_tile="skinny")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


def test_the_plan_picks_skinny_for_the_intensli_shapes_and_not_for_square_gemms():
    p = api.plan_for("akdbc,jk->cjbda", [(48, 48, 36, 36, 48), (24, 48)], "float32", backend="cuda")
    assert [s.config for s in p.steps] == [(("tile", "skinny"),)]  # no operand copies either
    k = emit_step(p, p.steps[0])
    assert k.name.startswith("einc_skinny_") and "C staged through shared memory" in k.source
    p = api.plan_for("ij,jk->ik", [(512, 512), (512, 512)], "float32", backend="cuda")
    assert ("tile", "skinny") not in p.steps[0].config


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes,dtype,what", CASES, ids=IDS)
def test_gpu_skinny_matches_numpy(monkeypatch, subs, shapes, dtype, what):
    import einc
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setattr(emit_skinny, "MIN_ROWS", 1)  # the plan picks skinny at these sizes too
    rng = np.random.default_rng(3)
    ops = [make(rng, s, dtype) for s in shapes]
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    assert ("tile", "skinny") in p.steps[-1].config
    got = einc.einsum(subs, *ops, backend="cuda", strategy="gett")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["whole", "mixed"])
@pytest.mark.parametrize("subs,shapes,dtype,what", TAIL, ids=[c[3] for c in TAIL])
def test_gpu_skinny_tile_schedules(monkeypatch, subs, shapes, dtype, what, mode):
    import einc
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setattr(emit_skinny, "MIN_ROWS", 1)
    _tail(monkeypatch, mode, _plan(subs, shapes, dtype))
    rng = np.random.default_rng(4)
    ops = [make(rng, s, dtype) for s in shapes]
    api._EXECUTABLES.clear()  # emit again under this schedule
    try:
        got = einc.einsum(subs, *ops, backend="cuda", strategy="gett")
    finally:
        api._EXECUTABLES.clear()
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", RM4, ids=[c[3] for c in RM4])
def test_emulated_skinny_with_four_rows_per_thread(monkeypatch, subs, shapes, dtype, what):
    monkeypatch.setenv("EINC_SKINNY_RM", "4")  # what the emitter picks once tiles fill the GPU
    rng = np.random.default_rng(11)
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    assert "4 row(s) per thread" in emit_step(p, p.steps[-1], gett_tile="skinny").source
    got = emulate(p, ops, max_grid=2, gett_tile="skinny")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


# Tiles of a last, partial wave split into K ranges (KSPLIT: A through a shared ring, all of
# K in B's chunk), the ranges' partial tiles summed in order through the zeroed scratch
KSPLIT = [
    ("akb,jk->jba", [(40, 64, 70), (24, 64)], "float32", "A M-fast, C staged, 8 slices"),
    ("abk,kj->bja", [(37, 40, 64), (64, 24)], "float32", "A K-fast, lanes on C's a"),
    ("abk,kj->bja", [(37, 40, 61), (61, 24)], "float32", "A K-fast, ragged last slice (K = 61)"),
    ("ki,kj->ij", [(50, 1100), (50, 16)], "float32", "A M-fast, one axis, C N-fast rows"),
    ("bik,bkj->bij", [(3, 200, 40), (3, 40, 20)], "float32", "batch in the rest table moves B"),
    ("akb,jk->jba", [(40, 64, 70), (24, 64)], "int32", "int32 wraps, same order"),
]


def _ksplit_sms(monkeypatch, p):
    """Switch K ranges on and patch the SM count to the first that leaves a last wave split into them."""
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    for sms in range(1, 64):
        monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", sms)
        k = emit_step(p, p.steps[-1], gett_tile="skinny")
        if k.scratch:
            return k
    raise AssertionError("no SM count splits the last wave into K ranges")


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", KSPLIT, ids=[c[3] for c in KSPLIT])
def test_emulated_skinny_k_ranges_sum_in_order(monkeypatch, subs, shapes, dtype, what):
    rng = np.random.default_rng(11)
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    k = _ksplit_sms(monkeypatch, p)
    tiles, whole = _words(p)
    kparts = k.words[18]
    assert 0 < whole < tiles and kparts >= 2 and "K ranges each" in k.source
    got = emulate(p, ops, max_grid=2, gett_tile="skinny")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))
    # another grid finishes the ranges in another order: the sums must not move a bit
    again = emulate(p, ops, max_grid=3, gett_tile="skinny")
    assert np.array_equal(got.view(np.uint8), again.view(np.uint8))


def test_k_ranges_only_where_b_holds_all_of_k_and_a_takes_the_ring(monkeypatch):
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    p = _plan("akb,jk->jba", [(384, 384, 384), (24, 384)], "float32")
    k = emit_step(p, p.steps[0], gett_tile="skinny")
    assert k.scratch and k.words[18] == 11 and k.grid[0] == 2 * emit_skinny.sm_count()  # 288 tiles on 264
    monkeypatch.delenv("EINC_SKINNY_KSPLIT")  # the default: halves
    k0 = emit_step(p, p.steps[0], gett_tile="skinny")
    assert not k0.scratch and k0.words[18] == 0 and "as two halves" in k0.source
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    long_k = _plan("akb,jk->jba", [(384, 2000, 384), (24, 2000)], "float32")  # B in several chunks
    assert not emit_step(long_k, long_k.steps[0], gett_tile="skinny").scratch
    f16 = _plan("akb,jk->jba", [(384, 384, 384), (24, 384)], "float16")  # the converting path
    assert not emit_step(f16, f16.steps[0], gett_tile="skinny").scratch


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes,dtype,what", KSPLIT, ids=[c[3] for c in KSPLIT])
def test_gpu_skinny_k_ranges_sum_in_order(monkeypatch, subs, shapes, dtype, what):
    import einc
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setattr(emit_skinny, "MIN_ROWS", 1)
    _ksplit_sms(monkeypatch, _plan(subs, shapes, dtype))
    rng = np.random.default_rng(12)
    ops = [make(rng, s, dtype) for s in shapes]
    api._EXECUTABLES.clear()  # emit again under this SM count
    try:
        got = [einc.einsum(subs, *ops, backend="cuda", strategy="gett") for _ in range(3)]
    finally:
        api._EXECUTABLES.clear()
    assert_matches(got[0], subs, *ops, terms=summed_terms(subs, shapes))
    for g in got[1:]:  # whichever range finishes last, the same bits
        assert np.array_equal(g.view(np.uint8), got[0].view(np.uint8))


@pytest.mark.gpu
def test_gpu_k_ranges_in_a_cuda_graph_start_from_a_zeroed_scratch(monkeypatch):
    import einc
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setattr(emit_skinny, "MIN_ROWS", 1)
    monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", 1)
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    subs, shapes = "akb,jk,b->jba", [(40, 64, 70), (24, 64), (70,)]  # skinny (split), then a reduce
    rng = np.random.default_rng(13)
    ops = [make(rng, s, "float32") for s in shapes]
    api._EXECUTABLES.clear()
    try:
        got = [einc.einsum(subs, *ops, backend="cuda") for _ in range(4)]  # calls 2.. replay a graph
        ex = [v for k, v in api._EXECUTABLES.data.items() if k[0].startswith("cuda")][0]
        assert ex.kernels[0].scratch and ex.graph_launches == 3
    finally:
        api._EXECUTABLES.clear()
    for g in got:
        assert_matches(g, subs, *ops, terms=summed_terms(subs, shapes))
        assert np.array_equal(g.view(np.uint8), got[0].view(np.uint8))


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes", [("akb,jk->jba", [(384, 384, 384), (24, 384)]),
                                         ("abk,kj->bja", [(384, 376, 384), (384, 24)])], ids=["akb", "abk"])
def test_gpu_tccg_intensli_last_wave_in_k_ranges(monkeypatch, subs, shapes):
    import einc
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    api._EXECUTABLES.clear()
    p = _plan(subs, shapes, "float32")
    assert emit_step(p, p.steps[0]).scratch  # 288 tiles on 264 slots: 24 split into 11 K ranges
    rng = np.random.default_rng(14)
    ops = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    try:
        got = [einc.einsum(subs, *ops, backend="cuda") for _ in range(2)]
    finally:
        api._EXECUTABLES.clear()
    assert_matches(got[0], subs, *ops, terms=summed_terms(subs, shapes))
    assert np.array_equal(got[0].view(np.uint8), got[1].view(np.uint8))


@pytest.mark.parametrize("subs,shapes", [("akb,jk->jba", [(384, 384, 384), (24, 384)]),
                                         ("abk,kj->bja", [(384, 376, 384), (384, 24)])], ids=["akb", "abk"])
def test_k_range_kernels_compile_without_spills(monkeypatch, subs, shapes):
    """The K-range variant keeps the whole tiles' registers (a B offset in the multiply
    spilled 40-84 bytes at the 128-register cap, which is why a range reloads B's rows)."""
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    p = _plan(subs, shapes, "float32")
    k = emit_step(p, p.steps[0], gett_tile="skinny")
    assert k.scratch
    regs, st, ld, log = ptxas(k)
    assert 0 < regs <= 128 and st == 0 and ld == 0, log
