"""The smallmn kernel (whole small output per block, K split into parts: `abcd,dbea->ec`)
on the CPU emulator of the CUDA execution model, on NVRTC, in the plan, and on the GPU.

The layouts pinned: A and B fast along different K modes (x and y of the K box, B read
in place, no copy), both K-fast along one mode (16-byte pieces for both), operands fast
along M / N (scalar loads), a tabled rest of K, ragged M, N and K boxes, K = 0, fp64, the
converting register path (fp16), and the plan's partial tiles summed by a reduce step.
"""

import numpy as np
import pytest

from einc import api
from einc.execute import Executable
from dataclasses import replace

from einc.plan import PART, KSlice
from einc.codegen.cuda import emit_smallmn
from einc.codegen.cuda.emit import emit_step
from einc.codegen.cuda.emit_smallmn import micro_tile, smallmn_layout

from oracle import assert_matches, summed_terms
from test_cuda_codegen import emulate, emulate_step, make, needs_emulator, ptxas

# (subscripts, shapes, dtype, what it pins)
CASES = [
    ("abcd,dbea->ec", [(5, 3, 7, 9), (9, 3, 6, 5)], "float32", "A x-fast pieces, B y-fast, ragged box"),
    ("abcd,dbea->ec", [(8, 2, 70, 8), (8, 2, 75, 8)], "float32", "ragged M = 70, N = 75"),
    ("ik,jk->ij", [(9, 100), (13, 100)], "float32", "both K-fast on one mode: pieces for both"),
    ("ki,kj->ij", [(90, 9), (90, 13)], "float32", "A M-fast, B N-fast: scalar loads"),
    ("abcdf,dbfea->ec", [(4, 3, 6, 5, 2), (5, 3, 2, 7, 4)], "float32", "tabled rest (b, d)"),
    ("abcd,dbea->ec", [(5, 3, 7, 9), (9, 3, 6, 5)], "float64", "fp64, 8-byte copies"),
    ("abcd,dbea->ec", [(5, 3, 7, 9), (9, 3, 6, 5)], "float16", "converting register path"),
    ("ik,jk->ij", [(7, 0), (5, 0)], "float32", "K = 0 gives zeros"),
    ("ik,jk->ij", [(128, 40), (128, 40)], "float32", "M = N = 128"),
    ("abcd,dbea->ec", [(5, 3, 7, 9), (9, 3, 6, 5)], "int32", "int32 sums wrap in uint32"),
]
IDS = [c[3] for c in CASES]


def _plan(subs, shapes, dtype):
    return api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", CASES, ids=IDS)
def test_emulated_smallmn_matches_numpy(subs, shapes, dtype, what):
    rng = np.random.default_rng(len(subs) * 5 + len(shapes[0]))
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    assert smallmn_layout(p.steps[-1], 0) is not None
    got = emulate(p, ops, max_grid=1, gett_tile="smallmn")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@needs_emulator
@pytest.mark.parametrize("dm", [True, False], ids=["fragments", "ffma"])
@pytest.mark.parametrize("subs,shapes,dtype,what", [CASES[0], CASES[1], CASES[4], CASES[5]],
                         ids=[CASES[i][3] for i in (0, 1, 4, 5)])
def test_emulated_smallmn_with_64_k_slices(monkeypatch, subs, shapes, dtype, what, dm):
    monkeypatch.setattr(emit_smallmn, "DMMA", dm)  # (fp32: the fragment path's default slice, or FFMA's)
    monkeypatch.setenv("EINC_SMALLMN_BK", "64")  # the experiment switches: two k per lane and row,
    monkeypatch.setenv("EINC_SMALLMN_OCTETS", "1")  # and the octet thread order (TN = 12 for 72)
    rng = np.random.default_rng(len(subs) * 3 + len(shapes[0]))
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    assert "EincSmallTile<" in (src := emit_step(p, p.steps[-1], gett_tile="smallmn").source)
    assert ", 64, 1, " in src.split("einc_smallmn<")[-1]
    got = emulate(p, ops, max_grid=1, gett_tile="smallmn")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@needs_emulator
@pytest.mark.parametrize("flat", [True, False], ids=["flat", "cut"])
@pytest.mark.parametrize("subs,shapes,dtype", [
    ("abcd,dbea->ec", [(6, 4, 9, 16), (16, 4, 10, 6)], "float32"),
    ("abcd,dbea->ec", [(6, 4, 9, 16), (16, 4, 10, 6)], "float64"),
    ("abcd,dbea->ec", [(6, 4, 9, 16), (16, 4, 10, 6)], "float16"),
])
def test_emulated_plan_sums_the_partial_tiles(monkeypatch, subs, shapes, dtype, flat):
    monkeypatch.setattr(emit_smallmn, "K_MIN", 1)
    monkeypatch.setattr(emit_smallmn, "MIN_SLICES", 2)
    monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", 2)  # 2 x (blocks per SM) parts of 13-36 slices: ranges
    monkeypatch.setenv("EINC_SMALLMN", "1")  # that start and end inside a rest index
    monkeypatch.setenv("EINC_SMALLMN_FLAT", "1" if flat else "0")
    rng = np.random.default_rng(5)
    ops = [make(rng, s, dtype) for s in shapes]
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    gemm = next(s for s in p.steps if s.strategy == "gett")
    assert [s.strategy for s in p.steps] == ["gett", "reduce"]  # no K-order copy of B
    cuts = [m for m in gemm.modes if isinstance(m.label, KSlice)]
    if flat:  # no cut: the parts are ranges of the one K walk, slot p of the temporary each
        parts = dict(gemm.config)["parts"]
        assert not cuts and dict(gemm.config)["tile"] == "smallmn" and 2 <= parts <= 8
        assert p.buffers[gemm.result].size == parts * 9 * 10 and dict(gemm.config)["part_stride"] == 90
        assert emit_step(p, gemm).grid == (parts, 1, 1)
        assert [m.label for m in p.steps[1].modes if m.kind == "sum"] == [PART]
    else:
        assert gemm.config == (("tile", "smallmn"),)
        assert cuts and all(m.kind == "batch" for m in cuts)
    for grid in (1, 3):  # fewer blocks than parts: the kernel grid-strides
        got = emulate(p, ops, max_grid=grid)
        assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))
    if dtype != "float16":  # (the CPU's gett takes no fp16)
        cpu = np.full(p.out_shape, np.nan, dtype=p.out_dtype)
        Executable(p)(ops, cpu)  # an ordinary plan: the CPU executor agrees (the flat split's other parts zeroed)
        assert_matches(cpu, subs, *ops, terms=summed_terms(subs, shapes))


@needs_emulator
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_emulated_flat_parts_stride_through_the_slices(dtype):
    """The flat split at several part counts: part p sums slices p, p + parts, ... of the K
    walk (strides whose digits carry through x, y and rest), every tile slot written."""
    subs, shapes = "abcd,dbea->ec", [(6, 4, 9, 16), (16, 4, 10, 6)]  # 8 slices (fp32), 12 (fp16)
    rng = np.random.default_rng(9)
    ops = [make(rng, s, dtype) for s in shapes]
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    want = np.einsum(subs, *[o.astype(np.float64) for o in ops])
    for parts in (1, 3, 5, 7, 8, 12, 20):  # 8 / 12: one slice each; past the slices: zero tiles
        flat = replace(p.steps[-1], config=(("tile", "smallmn"), ("parts", parts), ("part_stride", 90)))
        k = emit_step(p, flat)
        assert k.grid == (parts, 1, 1) and (parts == 1 or f"one of {parts} parts" in k.source)
        got = emulate_step(p, flat, ops, parts * 90, max_grid=4).reshape(parts, 10, 9)
        np.testing.assert_allclose(got.astype(np.float64).sum(0), want, rtol=1e-2 if dtype == "float16" else 1e-5,
                                   atol=0.05 if dtype == "float16" else 1e-4, err_msg=f"{parts} parts")


@pytest.mark.parametrize("subs,shapes,dtype,what", CASES, ids=IDS)
def test_smallmn_compiles_for_sm90(subs, shapes, dtype, what):
    p = _plan(subs, shapes, dtype)
    k = emit_step(p, p.steps[-1], gett_tile="smallmn")
    assert k.name.startswith("einc_smallmn_")
    regs, st, ld, log = ptxas(k)
    assert 0 < regs <= 255, log


def test_the_target_compiles_without_spills():
    p = api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
    k = emit_step(p, p.steps[0])
    regs, st, ld, log = ptxas(k)
    assert k.block[0] * regs <= 65536 and st == 0 and ld == 0, log  # (one block per SM)


def test_the_plan_picks_smallmn_for_72_to_the_5th_and_reads_b_in_place():
    p = api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
    assert [s.strategy for s in p.steps] == ["gett", "reduce"]  # no K-order copy of B
    gemm = p.steps[0]
    assert dict(gemm.config)["tile"] == "smallmn" and not any(isinstance(m.label, KSlice) for m in gemm.modes)
    parts = dict(gemm.config)["parts"]  # the flat split: one part per SM (one block each), 44-45 slices
    assert parts == 132 and p.buffers[gemm.result].size == parts * 72 * 72
    k = emit_step(p, gemm)
    assert k.grid == (parts, 1, 1) and "B loads y-fast" in k.source and "x-fast 16-byte pieces" in k.source
    assert k.aligned == (1,) and k.fallback is not None and "16-byte" not in k.fallback.source.split("// ---")[0]
    # a square GEMM, a short K and a wide output keep the tiled kernels
    for subs, shapes in [("ij,jk->ik", [(512, 512), (512, 512)]), ("ik,jk->ij", [(72, 2000), (72, 2000)]),
                         ("ik,jk->ij", [(200, 100000), (72, 100000)])]:
        p = api.plan_for(subs, shapes, "float32", backend="cuda")
        assert all(("tile", "smallmn") not in s.config for s in p.steps)


def test_einc_tune_offers_smallmn():
    from einc.tune import candidates, plan_with
    from einc.tuned import Choice
    _, t = plan_with("abcd,dbea->ec", [(72,) * 4] * 2, "float32")
    assert Choice("gett", "smallmn", 1) in candidates(t, 0)
    p, _ = plan_with("abcd,dbea->ec", [(72,) * 4] * 2, "float32", {0: Choice("gett", "64x64x8", 36)})
    assert all(("tile", "smallmn") not in s.config for s in p.steps)  # a tuned pick overrides the model
    p, _ = plan_with("abcd,dbea->ec", [(72,) * 4] * 2, "float32", {0: Choice("gett", "smallmn", 1)})
    assert [s.strategy for s in p.steps] == ["gett", "reduce"] and dict(p.steps[0].config)["tile"] == "smallmn"


def test_explain_shows_the_smallmn_kernel(monkeypatch):
    from einc.cost import explain_lines
    p = api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
    lines, tail = explain_lines(p)
    assert "smallmn dmma 1x3 k64" in lines[0] and "parts=132" in lines[0]
    monkeypatch.setattr(emit_smallmn, "DMMA", False)
    p = api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
    assert "smallmn 6x6" in explain_lines(p)[0][0]


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", [c for c in CASES if c[2] == "float32"],
                         ids=[c[3] for c in CASES if c[2] == "float32"])
def test_emulated_ffma_tiles_for_fp32(monkeypatch, subs, shapes, dtype, what):
    """EINC_SMALLMN_DMMA=0: fp32 on the FFMA micro-tiles (GPUs with slow fp64)."""
    monkeypatch.setattr(emit_smallmn, "DMMA", False)
    rng = np.random.default_rng(len(subs) * 7 + len(shapes[0]))
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    src = emit_step(p, p.steps[-1], gett_tile="smallmn").source
    assert "fragments of 16x8" not in src.split("\n\n")[0]
    got = emulate(p, ops, max_grid=1, gett_tile="smallmn")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


def test_fp32_takes_the_fp64_fragments_and_other_types_do_not():
    for dtype, dm in [("float32", True), ("float64", False), ("float16", False), ("int32", False)]:
        p = _plan("abcd,dbea->ec", [(5, 3, 7, 9), (9, 3, 6, 5)], dtype)
        head = emit_step(p, p.steps[-1], gett_tile="smallmn").source.split("\n\n")[0]
        assert ("fragments of 16x8 per warp on the fp64 tensor cores" in head) == dm, dtype
        assert ("accumulated as double" in head) == (dm or dtype == "float64"), dtype
    assert emit_smallmn.dmma_tile(72, 72)[:5] == (1, 3, 5, 3, 1)  # 80 x 72: 5 x 3 warps of 16 x 24
    assert emit_smallmn.dmma_tile(128, 128) is None  # no fragment tile fits the registers: FFMA
    p = _plan("ik,jk->ij", [(128, 40), (128, 40)], "float32")
    assert "fp64 tensor cores" not in emit_step(p, p.steps[-1], gett_tile="smallmn").source.split("\n\n")[0]
    for m, n in [(1, 1), (70, 75), (9, 128), (128, 3)]:
        fm, fn, wm, wn, kg, _ = emit_smallmn.dmma_tile(m, n)
        assert 16 * fm * wm >= m and 8 * fn * wn >= n and fm * fn <= 12 and wm * wn <= 16 and kg in (1, 2)


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,what", [CASES[0], CASES[1], CASES[4]], ids=[CASES[i][3] for i in (0, 1, 4)])
def test_emulated_fragments_with_two_k_groups(monkeypatch, subs, shapes, dtype, what):
    """EINC_SMALLMN_KG=2: each group one 16-k half of a slice, fp64 group sums added in order."""
    monkeypatch.setenv("EINC_SMALLMN_KG", "2")
    rng = np.random.default_rng(len(subs) * 11 + len(shapes[0]))
    ops = [make(rng, s, dtype) for s in shapes]
    p = _plan(subs, shapes, dtype)
    head = emit_step(p, p.steps[-1], gett_tile="smallmn").source.split("\n\n")[0]
    assert "fp64 tensor cores" in head and "x 2 k-group(s)" in head
    got = emulate(p, ops, max_grid=1, gett_tile="smallmn")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


def test_fragments_only_where_fp64_tensor_cores_run_at_full_rate():
    from einc.codegen.cuda.emit_smallmn import fp64_tensor_cores
    assert [fp64_tensor_cores(a) for a in ("sm_90", "sm_90a", "sm_100a", "sm_80", "sm_86", "sm_89", "sm_120")] == \
        [True, True, True, False, False, False, False]
    p = api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
    heads = {a: emit_step(p, p.steps[0], a).source.split("\n\n")[0] for a in ("sm_90", "sm_80", "sm_89")}
    assert "fp64 tensor cores" in heads["sm_90"]
    assert all("fp64 tensor cores" not in heads[a] and "6x6 per thread" in heads[a] for a in ("sm_80", "sm_89"))
    q = api.plan_for("abk,kj->bja", [(384, 376, 384), (384, 24)], "float32", backend="cuda")  # skinny, K-fast
    assert "fp64 tensor cores" in emit_step(q, q.steps[0], "sm_90").source.split("\n\n")[0]
    assert "fp64 tensor cores" not in emit_step(q, q.steps[0], "sm_86").source.split("\n\n")[0]


@needs_emulator
@pytest.mark.parametrize("m,n", [(40, 20), (50, 110)], ids=["3x3 fragments, one warp", "1x7 fragments, 4x2 warps"])
def test_emulated_fragment_tiles(m, n):
    """Fragment tiles beyond the 72 one: several m16 fragments per warp (rows 40 of 48), and
    warps on both axes with ragged columns (110 of 112)."""
    from einc.codegen.cuda.emit_smallmn import dmma_tile
    fm, fn, wm, wn, _, _ = dmma_tile(m, n)
    assert (fm > 1) if m == 40 else (wm > 1 and wn > 1)
    subs, shapes = "abc,cbd->ad", [(m, 3, 70), (70, 3, n)]
    rng = np.random.default_rng(m + n)
    ops = [make(rng, s, "float32") for s in shapes]
    p = _plan(subs, shapes, "float32")
    assert f"{fm}x{fn} fragments" in emit_step(p, p.steps[-1], gett_tile="smallmn").source.split("\n\n")[0]
    got = emulate(p, ops, max_grid=1, gett_tile="smallmn")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@needs_emulator
def test_emulated_fragment_sums_are_fp64():
    """+-2^24 and ones: fp32 running sums lose the ones; the fragment path's sums are exact."""
    rng = np.random.default_rng(5)
    K = 256
    a = np.ones((3, K), np.float32)
    big = rng.permutation(K)[:80]
    a[:, big[:40]], a[:, big[40:]] = 2.0 ** 24, -(2.0 ** 24)
    b = np.ones((2, K), np.float32)
    p = _plan("ik,jk->ij", [a.shape, b.shape], "float32")
    assert "fp64 tensor cores" in emit_step(p, p.steps[-1], gett_tile="smallmn").source
    got = emulate(p, [a, b], max_grid=1, gett_tile="smallmn")
    np.testing.assert_array_equal(got, np.full((3, 2), K - 80, np.float32))


@needs_emulator
def test_emulated_octet_thread_order_on_the_72_tile(monkeypatch):
    monkeypatch.setenv("EINC_SMALLMN_OCTETS", "1")
    monkeypatch.setattr(emit_smallmn, "DMMA", False)  # (an order of FFMA threads)
    subs, shapes = "abcd,dbea->ec", [(4, 2, 72, 8), (8, 2, 72, 4)]
    rng = np.random.default_rng(9)
    ops = [make(rng, s, "float32") for s in shapes]
    p = _plan(subs, shapes, "float32")
    assert "12, 2, 8, 3, 32, 1, true, false>" in emit_step(p, p.steps[-1], gett_tile="smallmn").source
    got = emulate(p, ops, max_grid=1, gett_tile="smallmn")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


def test_micro_tile_covers_72_exactly():
    assert micro_tile(72, 72, 4) == (6, 6, 12, 12, 2, 2)
    rm, rn, tm, tn, kg, _ = micro_tile(70, 75, 4)
    assert tm * rm >= 70 and tn * rn >= 75


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes,dtype,what", CASES, ids=IDS)
def test_gpu_smallmn_matches_numpy(monkeypatch, subs, shapes, dtype, what):
    import einc
    monkeypatch.setattr(emit_smallmn, "K_MIN", 0)  # the plan picks smallmn at these sizes too
    monkeypatch.setattr(emit_smallmn, "MIN_SLICES", 1)
    monkeypatch.setenv("EINC_SMALLMN", "1")
    rng = np.random.default_rng(3)
    ops = [make(rng, s, dtype) for s in shapes]
    p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
    assert any(("tile", "smallmn") in s.config for s in p.steps)
    got = einc.einsum(subs, *ops, backend="cuda", strategy="gett")
    assert_matches(got, subs, *ops, terms=summed_terms(subs, shapes))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_smallmn_on_strided_views_and_the_target(monkeypatch, dtype):
    import einc
    monkeypatch.setattr(emit_smallmn, "K_MIN", 1)
    monkeypatch.setenv("EINC_SMALLMN", "1")
    rng = np.random.default_rng(4)
    a = make(rng, (20, 16, 72, 40), dtype)[:, ::2, :, ::2]  # strided A: no unit stride at all
    b = make(rng, (20, 8, 70, 20), dtype).transpose(3, 1, 2, 0)  # B[d, b, e, a], unit stride along a
    got = einc.einsum("abcd,dbea->ec", a, b, backend="cuda")
    assert_matches(got, "abcd,dbea->ec", a, b, terms=20 * 8 * 20)
    x, y = (make(rng, (72,) * 4, dtype) for _ in range(2))
    p = api.plan_for("abcd,dbea->ec", [x.shape, y.shape], dtype, backend="cuda")
    assert dict(p.steps[0].config)["tile"] == "smallmn" and dict(p.steps[0].config)["parts"] > 1  # flat split
    out = np.full((72, 72), np.nan, dtype=dtype)
    got = einc.einsum("abcd,dbea->ec", x, y, backend="cuda", out=out)
    assert_matches(got, "abcd,dbea->ec", x, y, terms=72 ** 3)


@pytest.mark.gpu
def test_gpu_smallmn_misaligned_operand_runs_the_scalar_twin(monkeypatch):
    import einc
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(emit_smallmn, "K_MIN", 1)
    monkeypatch.setenv("EINC_SMALLMN", "1")
    shapes = [(8, 6, 30, 16), (16, 6, 20, 8)]
    flat = [torch.randn(int(np.prod(s)) + 1, device="cuda", dtype=torch.float64) for s in shapes]
    a, b = flat[0][1:].view(*shapes[0]), flat[1][:-1].view(*shapes[1])  # A 8 bytes past 16-byte alignment
    p = api.plan_for("abcd,dbea->ec", shapes, "float64", backend="cuda", strategy="gett")
    assert emit_step(p, p.steps[0]).aligned == (1,)
    got = einc.einsum("abcd,dbea->ec", a, b, strategy="gett").cpu().numpy()
    assert_matches(got, "abcd,dbea->ec", a.cpu().numpy(), b.cpu().numpy(), terms=8 * 6 * 16)
