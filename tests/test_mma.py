"""Tensor-core GEMM steps (`mma`, kernels/mma.cuh): when they apply, that every variant
compiles, and (on a GPU) that they agree with numpy on ragged, permuted, strided,
tabled and batched contractions with poisoned outputs."""
from __future__ import annotations

import numpy as np
import pytest

import einc
import einc.api
from einc.codegen.cuda import emit_mma
from einc.codegen.cuda.emit import C_N_WORD, compile_options, emit_step
from oracle import assert_matches

TF32_EPS = 2.0 ** -9  # each operand rounded (or truncated) to a 10-bit mantissa


def kernel(expr, shapes, dtype, precision=None, tile=None, arch="sm_80", **kw):
    """The first gett step's kernel (sm_80 by default: the mma kernel; sm_90 may pick wgmma)."""
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, **kw)
    steps = [s for s in p.steps if s.strategy == "gett"]
    assert steps, [s.strategy for s in p.steps]
    return emit_step(p, steps[0], arch, gett_tile=tile)


@pytest.mark.parametrize("dtype,precision,expect", [
    ("float16", None, True), ("int8", None, True), ("uint8", None, True),
    ("float32", "tf32", True), ("float32", None, False), ("float64", "tf32", False),
    ("int16", None, False),
])
def test_when_tensor_cores_apply(dtype, precision, expect):
    p = einc.api.plan_for("ij,jk->ik", [(256, 256), (256, 256)], dtype, backend="cuda", precision=precision)
    for arch in ("sm_80", "sm_90"):
        names = [emit_step(p, s, arch).name for s in p.steps]
        assert any(n.startswith(("einc_mma_", "einc_wgmma_")) for n in names) == expect, names


def test_int8_into_int64_stays_off_tensor_cores():
    # int32 accumulation wraps at 2^32; numpy's int64 result would not
    p = einc.api.plan_for("ij,jk->ik", [(256, 256), (256, 256)], "int8", backend="cuda")
    s = next(s for s in p.steps if s.strategy == "gett")
    from einc.codegen.cuda.emit_mma import mma_op
    assert mma_op(s, [np.dtype("int64"), np.dtype("int8"), np.dtype("int8")], np.dtype("int64")) is None
    assert mma_op(s, [np.dtype("int32"), np.dtype("int8"), np.dtype("int8")], np.dtype("int32")) == "int8"


def test_precision_is_validated():
    with pytest.raises(einc.EincValueError, match="precision"):
        einc.einsum("ij,jk->ik", np.ones((2, 2)), np.ones((2, 2)), precision="fp8")


def test_layout_choices_in_header():
    nn = kernel("ij,jk->ik", [(256, 256), (256, 256)], "float16").source
    assert "A K-major in shared memory, 16-byte cp.async" in nn
    assert "B N-major in shared memory, 16-byte cp.async" in nn
    odd = kernel("ij,jk->ik", [(250, 250), (250, 250)], "float16").source  # 250 % 8 != 0
    assert "element loads via registers" in odd


def test_int8_nn_copies_b_k_major_for_wgmma():
    """int8 B must be K-major for wgmma: the plan transposes it first (it pays at 256^3)."""
    p = einc.api.plan_for("ij,jk->ik", [(256, 256), (256, 256)], "int8", backend="cuda")
    names = [emit_step(p, s, "sm_90").name.split("_")[1] for s in p.steps]
    assert names == ["transpose", "wgmma"], names


@pytest.mark.parametrize("expr,shapes,dtype,family", [
    ("ik,jk->ij", [(256, 256), (256, 256)], "float16", "wgmma"),   # both K-major
    ("ij,jk->ik", [(256, 256), (256, 256)], "float16", "wgmma"),   # B N-major: transposed
    ("ik,jk->ij", [(256, 250), (256, 250)], "int8", "mma"),        # K rows not 16-byte pieces
    ("ik,jk->ij", [(256, 256), (256, 256)], "int8", "wgmma"),
    ("ki,kj->ij", [(256, 256), (256, 256)], "float16", "wgmma"),   # A M-major: copied K-major first
    ("ik,jk->ij", [(250, 250), (250, 250)], "float16", "mma"),     # rows not 16-byte pieces
])
def test_wgmma_when_layouts_fit(expr, shapes, dtype, family):
    k = kernel(expr, shapes, dtype, arch="sm_90")
    assert k.name.startswith(f"einc_{family}_"), k.name
    if family == "wgmma":
        assert k.arch == "sm_90a" and k.fallback is not None and k.fallback.name.startswith("einc_mma_")


# (expr, shapes, dtype, precision, tile): every shared-memory layout, both load paths,
# tables, the swap, every instruction and tile; compiled through NVRTC (no GPU needed).
COMPILE = [
    ("ij,jk->ik", [(256, 256), (256, 256)], "float16", None, "mma64x64"),
    ("ki,kj->ij", [(256, 256), (256, 256)], "float16", None, "mma64x64"),
    ("ik,jk->ij", [(250, 250), (250, 250)], "float16", None, "mma64x64"),
    ("ij,jk->ki", [(256, 256), (256, 256)], "float16", None, "mma64x64"),
    ("abk,kcd->abcd", [(16, 17, 128), (128, 8, 9)], "float16", None, "mma64x64"),
    ("ij,jk->ik", [(256, 256), (256, 256)], "int8", None, "mma64x64"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "uint8", None, "mma64x64"),
    ("ij,jk->ik", [(256, 256), (256, 256)], "float32", "tf32", "mma64x64"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "float32", "tf32", "mma128x128"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "float16", None, "wgmma128x128"),
    ("ij,jk->ik", [(256, 256), (256, 256)], "bfloat16", None, "wgmma128x256"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "int8", None, "wgmma128x128"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "float32", "tf32", "wgmma128x128"),
    # warp-specialised: both B layouts, tables (the producer's per-slice lookups), int8, tf32
    ("ij,jk->ik", [(256, 256), (256, 256)], "float16", None, "wgmma256x128ws"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "bfloat16", None, "wgmma256x128ws"),
    ("abk,kcd->acbd", [(16, 17, 128), (128, 8, 16)], "float16", None, "wgmma256x128ws"),
    ("akl,kcl->ca", [(130, 24, 16), (24, 72, 16)], "float16", None, "wgmma256x128ws"),
    ("akl,lkc->ac", [(130, 24, 16), (16, 24, 72)], "float16", None, "wgmma128x256ws"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "int8", None, "wgmma256x128ws"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "float32", "tf32", "wgmma256x128ws"),
    ("ij,jk->ik", [(256, 256), (256, 256)], "float16", None, "wgmma128x256ws"),
    ("ik,jk->ij", [(256, 256), (256, 256)], "float32", "tf32", "wgmma128x256ws"),
    # short K: three stages at two blocks per SM
    ("ik,jk->ij", [(256, 96), (256, 96)], "bfloat16", None, "wgmma128x128s3"),
    ("abk,kcd->acbd", [(64, 17, 24), (24, 32, 16)], "float16", None, "wgmma128x128s3"),
    ("ik,jk->ij", [(256, 96), (256, 96)], "bfloat16", None, "wgmma128x128ws1"),  # one consumer warpgroup
    ("ik,jk->ij", [(256, 96), (256, 96)], "int8", None, "wgmma128x128ws1"),
    ("ik,jk->ij", [(256, 96), (256, 96)], "bfloat16", None, "wgmma128x128ws1p"),  # C staged apart
    ("ik,jk->ij", [(256, 72), (256, 72)], "float32", "tf32", "wgmma128x128ws1p"),
    ("ij,jk->ik", [(256, 512), (512, 256)], "float16", None, "wgmma128x256wsp"),   # C apart, 212 KB
    ("ik,jk->ij", [(400, 256), (392, 256)], "bfloat16", None, "wgmma192x192ws"),   # three consumers
    ("ij,jk->ik", [(400, 256), (256, 392)], "float16", None, "wgmma192x192ws"),    # B N-major: 3 strips
    ("ik,jk->ij", [(400, 256), (392, 256)], "bfloat16", None, "wgmma192x192wsp"),  # C apart, 218 KB
    ("ij,jk->ik", [(400, 256), (256, 392)], "float16", None, "wgmma192x192wsp"),
    # four stages, C staged a warpgroup at a time (218 KB)
    ("ik,jk->ij", [(400, 256), (392, 256)], "bfloat16", None, "wgmma192x192wsp4"),
    ("ij,jk->ik", [(400, 256), (256, 392)], "float16", None, "wgmma192x192wsp4"),
]


@pytest.mark.parametrize("expr,shapes,dtype,precision,tile", COMPILE)
def test_mma_kernels_compile(expr, shapes, dtype, precision, tile):
    from einc.codegen.cuda import emit_wgmma
    from einc.runtime.cuda import compile_cubin
    k = kernel(expr, shapes, dtype, precision, tile, arch="sm_90")
    if tile.startswith("wgmma"):
        assert k.name.startswith("einc_wgmma_")
        assert k.smem == emit_wgmma.smem_bytes(tile, np.dtype(dtype).itemsize, len(k.tmaps) == 3)  # (3: C's map)
        ws = emit_wgmma.WGMMA_TILES[tile][3] is not None
        assert ("einc_wgmma_gett_ws<" in k.source) == ws and k.block[0] == emit_wgmma.threads(tile)
    else:
        assert k.name.startswith("einc_mma_")
        assert k.smem == emit_mma.smem_bytes(tile, {"float16": 2, "float32": 4}.get(dtype, 1),
                                             "A K-major" in k.source, "B K-major" in k.source)
    cubin = compile_cubin(k.source, k.name, dict(compile_options("sm_90"), arch=k.arch or "sm_90"))
    assert cubin[:4] == b"\x7fELF"


def test_four_stage_192_stages_c_by_warpgroup(monkeypatch):
    """wgmma192x192wsp4: C's boxes are one warpgroup's 64 rows (the staging is 24 KB, so a
    fourth stage fits); where C's map does not fit (a row pitch of 1400 bytes) the kernel is
    the three-stage wsp; EINC_WGMMA_192P4 (WIDE_FOUR) 1 or 2 makes it the persistent 192 tile."""
    from einc.codegen.cuda import emit_wgmma
    k = kernel("ik,jk->ij", [(400, 256), (392, 256)], "bfloat16", None, "wgmma192x192wsp4", arch="sm_90")
    assert k.key[2] == "wgmma192x192wsp4" and k.tmaps[2].box == (64, 64) and k.smem <= emit_wgmma.SMEM_BLOCK
    assert "einc_wgmma_epilogue_tma_wg" in k.source and ", 2>(out" in k.source  # (forced: the storer)
    k = kernel("ik,jk->ij", [(1000, 320), (700, 320)], "float16", None, "wgmma192x192wsp4", arch="sm_90")
    assert k.key[2] == "wgmma192x192wsp" and len(k.tmaps) == 2
    big = ("ki,jk->ji", [(7248, 7248), (7240, 7248)], "bfloat16")
    assert kernel(*big, arch="sm_90").key[2] == "wgmma192x192wsp"
    for mode in ("1", "2"):  # each warpgroup's leader stores its rows, or the storer thread
        monkeypatch.setattr(emit_wgmma, "WIDE_FOUR", mode)
        k = kernel(*big, arch="sm_90")
        assert k.key[2] == "wgmma192x192wsp4" and k.source.count(f", {mode}>(out") == 1


def test_tma_only_tiles_give_way_where_tma_cannot_load(monkeypatch):
    """192x192ws has only the TMA producer (the cp.async loaders' piece walk needs BN/8 to
    divide 128): with TMA off, or a layout the maps can't take, the step gets 128x256ws."""
    from einc.codegen.cuda import emit_wgmma
    big = ("ki,jk->ji", [(7248, 7248), (7240, 7248)], "bfloat16")
    assert kernel(*big, arch="sm_90").key[2] == "wgmma192x192wsp"  # 11 whole waves, not 12.5 of 13
    monkeypatch.setattr(emit_wgmma, "WIDE_APART", False)  # (EINC_WGMMA_192P=0)
    assert kernel(*big, arch="sm_90").key[2] == "wgmma192x192ws"
    monkeypatch.setattr(emit_wgmma, "WIDE_APART", True)
    monkeypatch.setattr(emit_wgmma, "WIDE_SQUARE", 0.0)  # (EINC_WGMMA_192=0)
    assert kernel(*big, arch="sm_90").key[2] == "wgmma128x256ws"
    monkeypatch.setattr(emit_wgmma, "WIDE_SQUARE", 0.96)
    assert kernel("ik,jk->ij", [(400, 256), (392, 256)], "bfloat16", None, "wgmma192x192ws", "sm_90").tmaps
    # M a pair of modes in A (a tabled group): no maps (WS_CASES)
    assert kernel("akl,kcl->ca", [(130, 24, 16), (24, 72, 16)], "float16", None, "wgmma192x192ws",
                  "sm_90").key[2] == "wgmma128x256ws"
    monkeypatch.setattr(emit_wgmma, "TMA", False)
    assert kernel(*big, None, "wgmma192x192ws", "sm_90").key[2] == "wgmma128x256ws"
    assert kernel(*big, arch="sm_90").key[2] == "wgmma128x256ws"
    monkeypatch.setattr(emit_wgmma, "TMA", True)
    monkeypatch.setattr(emit_wgmma, "WIDE_SQUARE", 0.0)
    assert kernel(*big, arch="sm_90").key[2] == "wgmma128x256ws"


# ---------------------------------------------------------------------------------------
# on the GPU

def _data(rng, shape, dtype, wide_ints=False):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        lo, hi = (np.iinfo(dt).min, np.iinfo(dt).max + 1) if wide_ints else ((-3 if dt.kind == "i" else 0), 4)
        return rng.integers(lo, hi, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _poisoned(torch, shape, dt):
    tdt = {"float16": torch.float16, "float32": torch.float32, "int8": torch.int8,
           "uint8": torch.uint8, "int32": torch.int32}[np.dtype(dt).name]
    fill = float("nan") if np.dtype(dt).kind == "f" else 77
    return torch.full(shape, fill, dtype=tdt, device="cuda")


GPU_CASES = [
    # expr, shapes, dtype, precision (ragged M/N/K, both majors, odd strides, tables, batch)
    ("ij,jk->ik", [(200, 136), (136, 72)], "float16", None),
    ("ij,jk->ik", [(131, 77), (77, 93)], "float16", None),     # extents not multiples of 8
    ("ki,kj->ij", [(96, 200), (96, 64)], "float16", None),     # A M-major (ldmatrix.trans)
    ("ik,jk->ij", [(200, 96), (64, 96)], "float16", None),     # B K-major
    ("ij,jk->ki", [(120, 64), (64, 136)], "float16", None),    # C unit-stride along M: swap
    ("bij,bjk->bik", [(3, 65, 40), (3, 40, 70)], "float16", None),
    ("abk,kcd->abcd", [(16, 17, 128), (128, 8, 9)], "float16", None),  # tabled M and N
    ("akb,kcb->ac", [(20, 24, 8), (24, 33, 8)], "float16", None),      # tabled K
    ("ij,jk->ik", [(200, 136), (136, 72)], "int8", None),
    ("ik,jk->ij", [(130, 96), (70, 96)], "int8", None),
    ("ij,jk->ik", [(97, 129), (129, 65)], "uint8", None),
    ("ij,jk->ik", [(200, 136), (136, 72)], "float32", "tf32"),
    ("ki,kj->ij", [(96, 200), (96, 130)], "float32", "tf32"),
    ("ij,jk->ik", [(150, 1000), (1000, 20)], "float16", None),  # split-K partial sums in fp32
]


@pytest.mark.gpu
@pytest.mark.parametrize("tile", ["mma64x64", "mma128x128k128", "mma128x256", "wgmma128x128", "wgmma128x256",
                                  "wgmma256x128", "wgmma256x128ws", "wgmma128x256ws", "wgmma128x128s3",
                                  "wgmma128x128ws1"])
@pytest.mark.parametrize("expr,shapes,dtype,precision", GPU_CASES)
def test_mma_against_numpy(monkeypatch, expr, shapes, dtype, precision, tile):
    """Every tile of both tensor-core kernels (wgmma cases whose layout it can't take run
    its mma twin, which must be right too). The cases are below the size at which the plan
    would pick tensor cores (or gett at all), so both are forced: a tensor-core kernel
    must be what runs."""
    torch = pytest.importorskip("torch")
    from einc.codegen.cuda import emit_wgmma
    monkeypatch.setattr(emit_mma, "choose_tile", lambda step: tile if tile.startswith("mma") else "mma128x128")
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: tile)
    monkeypatch.setattr(emit_wgmma, "ENABLED", tile.startswith("wgmma"))
    monkeypatch.setattr(emit_mma, "MIN_WORK", 0)
    einc.api._EXECUTABLES.clear()
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, strategy="gett")
    names = [emit_step(p, s, "sm_90").name for s in p.steps if s.strategy == "gett"]
    assert names and all(n.startswith(("einc_mma_", "einc_wgmma_")) for n in names), names
    rng = np.random.default_rng(len(expr) + sum(map(sum, shapes)))
    arrays = [_data(rng, s, dtype) for s in shapes]
    ref = np.einsum(expr, *[a.astype(np.float64) for a in arrays])
    out = _poisoned(torch, ref.shape, dtype)
    r = einc.einsum(expr, *[torch.from_numpy(a).cuda() for a in arrays], out=out, precision=precision,
                    strategy="gett")
    assert r is out
    lhs, rhs = expr.split("->")
    extent = dict(zip(lhs.replace(",", ""), sum(map(list, shapes), [])))
    k = int(np.prod([n for l, n in extent.items() if l not in rhs]))  # terms in each sum
    assert_matches(out.cpu().numpy(), expr, *arrays, terms=max(k, 1),
                   product_eps=TF32_EPS if precision == "tf32" else 0.0)


# The warp-specialised tiles on cases that reach them (strategy="gett", >= 2^21 multiply-adds):
# ragged M/N/K, K past the ring (16 slices through 4 stages), K below one slice, batch,
# tabled M+N, tabled K with B K-major and N-major, int8, tf32.
# The last field: whether the TMA producer takes the layout (every group one strided mode,
# 16-byte strides); where it does, both producers run.
WS_CASES = [
    ("ij,jk->ik", [(300, 136), (136, 200)], "float16", None, True),    # B N-major: strips of 64
    ("ij,jk->ik", [(130, 1000), (1000, 72)], "float16", None, True),   # N = 72 < one strip
    ("ik,jk->ij", [(520, 24), (264, 24)], "float16", None, True),      # K = 24: one zero-filled box
    ("bij,bjk->bik", [(3, 300, 40), (3, 40, 136)], "float16", None, True),  # rank-3 maps
    ("abk,kcd->acbd", [(16, 17, 128), (128, 8, 16)], "float16", None, True),  # M, N tabled in C only
    ("akl,kcl->ca", [(130, 24, 16), (24, 72, 16)], "float16", None, False),
    ("akl,lkc->ac", [(130, 24, 16), (16, 24, 72)], "float16", None, False),
    ("ik,jk->ij", [(300, 96), (200, 96)], "int8", None, True),
    ("ik,jk->ij", [(300, 72), (200, 72)], "float32", "tf32", True),
    ("amji,cbkm->kjicba", [(8, 40, 7, 8), (5, 6, 6, 40)], "float16", None, False),  # ccsd_t: K short, C M-fast
    ("ij,kj->ik", [(264, 200), (136, 200)], "float16", None, True),    # K-major B, ragged K tail
    # one tile column (row), no batch, S % slices == 0: the C-apart tiles (ws1p) copy the
    # resident operand's slices once per block, so capped grids reuse them across tiles
    ("ap,srqp->srqa", [(96, 96), (6, 7, 40, 96)], "float16", None, True),  # ao2mo: N = 96, 2 slices
    ("ik,jk->ij", [(90, 40), (600, 40)], "float16", None, True),       # M = 90, one slice
    # C's N two modes (kernel N = k i, C = kji): the C-apart tiles' map splits N into (i, k);
    # N = 5 x 192 ends inside the last tile (boxes past k = 4 are clipped whole), M = 100 ragged
    ("lki,jl->kji", [(64, 5, 192), (100, 64)], "float16", None, True),
    ("blki,bjl->bkji", [(2, 64, 3, 128), (2, 72, 64)], "float16", None, True),  # + a batch: a 4-D C map
]


@pytest.mark.parametrize("n", range(len(WS_CASES)))
def test_tma_producer_takes_the_strided_layouts_and_compiles(monkeypatch, n):
    """Where every group is one strided mode the warp-specialised tile gets tensor maps
    whose boxes are one stage's slice, over the operand's own extents and byte strides;
    the kernel (its entry takes EincTmaps by value) builds for sm_90a."""
    from einc.codegen.cuda import emit_wgmma
    from einc.codegen.cuda.emit import gett_layout
    from einc.runtime.cuda import compile_cubin
    expr, shapes, dtype, precision, fits = WS_CASES[n]
    tile = ("wgmma256x128ws", "wgmma128x256ws")[n % 2]
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: tile)
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, strategy="gett")
    step = next(s for s in p.steps if s.strategy == "gett")
    k = emit_step(p, step, "sm_90")
    assert bool(k.tmaps) == fits and ("__grid_constant__ EincTmaps" in k.source) == fits
    if not fits:
        return
    bm, bn = emit_wgmma.WGMMA_TILES[tile][:2]
    lay = gett_layout(step, bm, bn)
    e = np.dtype(dtype).itemsize
    a, b = k.tmaps[:2]  # (a third, C's, where the tile stages C apart: test_tma_store_epilogue_...)
    rank = 2 + (lay.ext["b"] > 1)  # a batch: a third dimension, one batch index per box
    assert (a.ptr, b.ptr) == (lay.ta, lay.tb) and a.box == (128 // e, bm, 1)[:rank]
    assert a.dims[:2] == (lay.ext["k"], lay.ext["m"]) and len(a.dims) == len(b.dims) == rank
    assert b.box == ((128 // e, bn, 1) if "B K-major" in k.source else (64, 128 // e, 1))[:rank]
    assert all(len(t.strides) == rank - 1 for t in k.tmaps[:2])
    assert all(s % 16 == 0 and s > 0 for t in k.tmaps for s in t.strides)
    cubin = compile_cubin(k.source, k.name, dict(compile_options("sm_90"), arch=k.arch))
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("n", range(len(WS_CASES)))
def test_tma_store_epilogue_takes_row_major_16bit_c_and_compiles(monkeypatch, n):
    """EINC_WGMMA_TMA_STORE: the C-apart tile (ws1p) gets a third map, over the output
    (pointer 0), where C is 16-bit with its N group unit-stride and its M (and batch)
    group one strided mode; boxes of 64 columns by the tile's rows. The kernel builds for
    sm_90a without spills, its staging 1024-byte aligned in the smem it asks for."""
    from einc.codegen.cuda import emit_wgmma
    from einc.codegen.cuda.emit import gett_layout
    from test_cuda_codegen import ptxas
    expr, shapes, dtype, precision, fits = WS_CASES[n]
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: "wgmma128x128ws1p")
    monkeypatch.setattr(emit_wgmma, "TMA_STORE", True)
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, strategy="gett")
    step = next(s for s in p.steps if s.strategy == "gett")
    k = emit_step(p, step, "sm_90")
    lay = gett_layout(step, 128, 128)
    c = emit_wgmma.c_map(lay, p.buffers[step.result].dtype, 128, 128)
    split = emit_wgmma.split_c(c, lay)
    if not fits or c is None or len(c.dims) != len(k.tmaps[0].dims) + split:
        assert len(k.tmaps) <= 2 and "EincTmaps3 tm" not in k.source
        return
    assert len(k.tmaps) == 3 and k.tmaps[2] == c and c.ptr == 0 and c.box[:2] == (64, 128)
    assert "__grid_constant__ EincTmaps3 tm" in k.source
    if split:  # (n_in, m, n_out): the kernel reads n_in from c_n
        assert c.dims[0] * c.dims[2] == lay.ext["n"] and c.dims[1] == lay.ext["m"] and c.dims[0] % 64 == 0
        assert k.words[C_N_WORD] == c.dims[0] and "EincTmaps3, true>" in k.source
    else:
        assert c.dims[:2] == (lay.ext["n"], lay.ext["m"])
    assert k.smem == emit_wgmma.smem_bytes("wgmma128x128ws1p", 2, True) < emit_wgmma.smem_bytes("wgmma128x128ws1p", 2)
    regs, st, ld, log = ptxas(k, "sm_90a")
    assert st == 0 and ld == 0, log


def test_tma_store_map_of_the_ao2mo_step():
    """ao2mo ap,srqp (bf16): C = srqa is the kernel's [M = srq rows of 96 a]: one map of
    dims (96, 84^3), a row pitch of 192 bytes. lki,jl->kji's kernel N is k i (C = kji):
    the map splits it, (i 384, j 376, k 376); with i = 200 (not whole 64-column boxes) none."""
    from einc.codegen.cuda import emit_wgmma
    from einc.codegen.cuda.emit import gett_layout
    p = einc.api.plan_for("ap,srqp->srqa", [(96, 96), (84, 84, 84, 96)], "bfloat16", backend="cuda")
    c = emit_wgmma.c_map(gett_layout(p.steps[0], 128, 128), "bfloat16", 128, 128)
    assert c == emit_wgmma.Tmap(0, "BFLOAT16", (96, 84 ** 3), (192,), (64, 128))
    p = einc.api.plan_for("lki,jl->kji", [(384, 376, 384), (376, 384)], "bfloat16", backend="cuda")
    c = emit_wgmma.c_map(gett_layout(p.steps[0], 128, 256), "bfloat16", 128, 256)
    assert c == emit_wgmma.Tmap(0, "BFLOAT16", (384, 376, 376), (768, 376 * 384 * 2), (64, 128, 1))
    p = einc.api.plan_for("lki,jl->kji", [(384, 376, 200), (376, 384)], "bfloat16", backend="cuda")
    assert emit_wgmma.c_map(gett_layout(p.steps[0], 128, 256), "bfloat16", 128, 256) is None


def test_a_tabled_m_takes_the_warp_specialised_tile_only_with_tma(monkeypatch):
    """M (and N) tabled in C only: the TMA producer reads A's rows as one strided mode, so
    the warp-specialised tile applies; the cp.async producer would look every row up per
    slice (measured 130 TFLOP/s on bf16 njmi,kmln), so without TMA it keeps the all-loader tile."""
    from einc.codegen.cuda import emit_wgmma
    p = einc.api.plan_for("abk,kcd->acbd", [(160, 170, 512), (512, 80, 160)], "bfloat16", backend="cuda")
    (step,) = p.steps
    k = emit_step(p, step, "sm_90")
    assert k.key[2] == "wgmma128x256wsp" and len(k.tmaps) == 2  # (K = 512: C staged apart)
    monkeypatch.setattr(emit_wgmma, "TMA", False)
    k = emit_step(p, step, "sm_90")
    assert k.key[2] == "wgmma256x128" and not k.tmaps


def test_explain_says_which_steps_load_by_tma(monkeypatch):
    from einc import cost
    from einc.codegen.cuda import emit_wgmma
    p = einc.api.plan_for("ij,jk->ik", [(8192, 8192), (8192, 8192)], "bfloat16", backend="cuda")
    lines, _ = cost.explain_lines(p)
    assert "kernel=wgmma128x256ws (TMA)" in lines[0]
    monkeypatch.setattr(emit_wgmma, "TMA", False)
    lines, _ = cost.explain_lines(p)
    assert "kernel=wgmma128x256ws " in lines[0] and "TMA" not in lines[0]


# the TCCG ccsd ijkl shapes (bf16): tabled operands of a ~1 TFLOP GEMM
NJMI = ("njmi,kmln->lkji", [(96, 84, 84, 96), (84, 84, 84, 96)])
LNIM = ("lnim,kmjn->lkji", [(84, 96, 96, 96), (84, 96, 84, 96)])


@pytest.mark.parametrize("rows", [True, False])
def test_table_copies_put_heavy_tabled_operands_in_gemm_order(monkeypatch, rows):
    """Both of njmi,kmln's operands reach their groups through tables: both are copied into
    GEMM order (K in one order), and the GEMM left takes TMA maps on the warp-specialised
    tile. The copies keep each operand's unit-stride mode innermost (rows copies, the TMA
    copy): kmln plays A, K-major in its own k order (m n); njmi plays B, N-major ([k, rows]);
    with EINC_TC_COPY_ROWS off both are transposed into [rows, k]."""
    from einc import plan as plan_mod
    monkeypatch.setattr(plan_mod, "TC_COPY_ROWS", [rows])
    p = einc.api.plan_for(*NJMI, "bfloat16", backend="cuda")
    want = (["njmi->mnji", "kmln->lkmn", "mnji,lkmn->lkji"] if rows
            else ["njmi->jinm", "kmln->lknm", "jinm,lknm->lkji"])
    assert [s.text for s in p.steps] == want
    assert [emit_step(p, s, "sm_90").key[1] for s in p.steps[:2]] == (["copy_tma"] * 2 if rows else ["transpose"] * 2)
    k = emit_step(p, p.steps[-1], "sm_90")
    # (the persistent 192x192 tile: A's and B's maps and C's, whose boxes its epilogue stores)
    assert k.key[2] == "wgmma192x192wsp" and len(k.tmaps) == 3
    assert not any(emit_step(p, p.steps[-1], "sm_90").tables)  # no offset table left


def test_table_copies_skip_a_tabled_c_and_light_gemms(monkeypatch):
    """lnim,kmjn's C is tabled whatever the operands' order: at ~1 TFLOP A is copied too
    (lnim->linm, a rows copy; 1.67 against 2.18-2.37 ms, session 19c), but a shorter step
    with a tabled C (ccsd_t's, 4.4 GFLOP) keeps only the copy the 16-byte loads need. The
    same structure at a few MFLOP does not pay for copies; nor does an fp32 GEMM (no tensor
    cores: gpu_contiguous decides there)."""
    import einc.plan as plan
    from einc.codegen.cuda.emit import _rows_copy_axis
    p = einc.api.plan_for(*LNIM, "bfloat16", backend="cuda")
    assert [s.text for s in p.steps] == ["lnim->linm", "kmjn->kjnm", "linm,kjnm->lkji"]
    assert _rows_copy_axis(p.steps[0]) is not None and emit_step(p, p.steps[0], "sm_90").key[1] == "copy_tma"
    monkeypatch.setattr(plan, "TC_TABLE_COPY_TABLED_C_MIN_FLOPS", 2e12)
    p = einc.api.plan_for(*LNIM, "bfloat16", backend="cuda")
    assert [s.text for s in p.steps] == ["kmjn->kjnm", "lnim,kjnm->lkji"]
    monkeypatch.undo()
    monkeypatch.setattr(emit_mma, "MIN_WORK", 0)
    small = einc.api.plan_for("njmi,kmln->lkji", [(16,) * 4, (16,) * 4], "bfloat16", backend="cuda")
    assert len(small.steps) == 1  # 64 FLOP per copied byte < TC_TABLE_COPY_MIN_INTENSITY
    monkeypatch.setattr(plan, "TC_TABLE_COPY_MIN_INTENSITY", 32)
    small = einc.api.plan_for("njmi,kmln->lkji", [(16,) * 4, (16,) * 4], "bfloat16", backend="cuda")
    assert [s.text for s in small.steps][-1] == "mnji,lkmn->lkji"


@pytest.mark.gpu
@pytest.mark.parametrize("expr,shapes", [NJMI, LNIM, ("njmi,kmln->lkji", [(24, 20, 20, 24), (20, 20, 20, 24)])])
def test_table_copies_against_numpy(monkeypatch, expr, shapes):
    """The copied plan end to end, at TCCG size and (copies forced) small."""
    torch = pytest.importorskip("torch")
    import einc.plan as plan
    monkeypatch.setattr(plan, "TC_TABLE_COPY_MIN_INTENSITY", 1)
    monkeypatch.setattr(emit_mma, "MIN_WORK", 0)  # tensor cores (hence table_copies) at the small size too
    einc.api._EXECUTABLES.clear()
    rng = np.random.default_rng(5)
    arrays = [_data(rng, s, "float16") for s in shapes]
    got = einc.einsum(expr, *[torch.from_numpy(a).cuda() for a in arrays])
    p = einc.api.plan_for(expr, shapes, "float16", backend="cuda")
    assert len(p.steps) == 3
    lhs, rhs = expr.split("->")
    extent = dict(zip(lhs.replace(",", ""), sum(map(list, shapes), [])))
    k = int(np.prod([n for l, n in extent.items() if l not in rhs]))  # the summed terms (n x m)
    assert_matches(got.cpu().numpy(), expr, *arrays, terms=k)


@pytest.mark.gpu
@pytest.mark.parametrize("max_grid", [None, 2])
@pytest.mark.parametrize("tile", ["wgmma256x128ws", "wgmma128x256ws", "wgmma128x128ws1", "wgmma128x128ws1p",
                                  "wgmma128x256wsp", "wgmma192x192ws", "wgmma192x192wsp", "wgmma192x192wsp4"])
@pytest.mark.parametrize("tma,store", [(True, False), (False, False), (True, True)])
@pytest.mark.parametrize("expr,shapes,dtype,precision,tma_fits", WS_CASES)
def test_wgmma_ws_against_numpy(monkeypatch, expr, shapes, dtype, precision, tma_fits, tma, store, tile, max_grid):
    """The producer/consumer pipeline: its kernel is the one planned (no fallback), and
    with the grid capped at 2 blocks each walks several tiles, so the mbarrier phases
    carry across tiles. Both producers: TMA boxes (where the layout fits) and 16-byte
    cp.async pieces; ``store``: the C-apart tiles' epilogue storing C by TMA boxes
    (EINC_WGMMA_TMA_STORE), ragged edges clipped, the staging reused across tiles."""
    torch = pytest.importorskip("torch")
    from einc.codegen.cuda import emit_wgmma
    if tma and not tma_fits:
        pytest.skip("the TMA producer does not take this layout (the cp.async run covers it)")
    if store and tile not in emit_wgmma.SEPARATE_STAGING:
        pytest.skip("the TMA store is the C-apart tiles' epilogue")
    if tile in emit_wgmma.TMA_ONLY and not (tma and tma_fits):
        pytest.skip("a TMA-only tile (test_tma_only_tiles_give_way_where_tma_cannot_load)")
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: tile)
    monkeypatch.setattr(emit_wgmma, "loader_tile", lambda step: tile)  # (a tabled M without TMA)
    monkeypatch.setattr(emit_wgmma, "TMA", tma)
    monkeypatch.setattr(emit_wgmma, "TMA_STORE", store)
    if max_grid:
        monkeypatch.setattr(emit_wgmma, "MAX_GRID", max_grid)
    einc.api._EXECUTABLES.clear()
    kw = {"dtype": "int32"} if dtype == "int8" else {}
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, strategy="gett")
    ks = [emit_step(p, s, "sm_90") for s in p.steps]
    assert any("einc_wgmma_gett_ws<" in k.source for k in ks)
    assert any(k.tmaps for k in ks) == tma and all(("__grid_constant__ EincTmaps" in k.source) == bool(k.tmaps)
                                                   for k in ks if k.name.startswith("einc_wgmma"))
    if store:  # C's map exactly where c_map takes the layout (test_tma_store_epilogue_... : 7 cases do)
        from einc.codegen.cuda.emit import gett_layout
        bm, bn = emit_wgmma.WGMMA_TILES[tile][:2]
        for st, k in zip(p.steps, ks):
            if k.name.startswith("einc_wgmma") and k.tmaps:
                lay = gett_layout(st, bm, bn)
                c = emit_wgmma.c_map(lay, p.buffers[st.result].dtype, bm, bn)
                split = emit_wgmma.split_c(c, lay)
                assert (len(k.tmaps) == 3) == (c is not None and len(c.dims) == len(k.tmaps[0].dims) + split)
    rng = np.random.default_rng(len(expr) + sum(map(sum, shapes)))
    arrays = [_data(rng, s, dtype) for s in shapes]
    ref = np.einsum(expr, *[a.astype(np.float64) for a in arrays])
    out = _poisoned(torch, ref.shape, "int32" if dtype == "int8" else dtype)
    r = einc.einsum(expr, *[torch.from_numpy(a).cuda() for a in arrays], out=out, precision=precision,
                    strategy="gett", **kw)
    assert r is out
    lhs, rhs = expr.split("->")
    extent = dict(zip(lhs.replace(",", ""), sum(map(list, shapes), [])))
    k = int(np.prod([n for l, n in extent.items() if l not in rhs]))
    # int8 into int32: the reference sums in int32 too (numpy's int8 einsum wraps at 8 bits)
    wide = [a.astype(np.int32) for a in arrays] if kw else arrays
    assert_matches(out.cpu().numpy(), expr, *wide, terms=max(k, 1), dtype=kw.get("dtype"),
                   product_eps=TF32_EPS if precision == "tf32" else 0.0)


@pytest.mark.gpu
@pytest.mark.parametrize("expr,shapes", [("ij,jk->ik", [(300, 136), (136, 200)]),
                                         ("ij,jk,kl->il", [(300, 136), (136, 200), (200, 72)])])
def test_tma_maps_follow_moving_operands(monkeypatch, expr, shapes):
    """Tensor maps hold their operand's address: calls with new tensors (and a view 16
    bytes into a buffer) must re-encode them, on direct launches and in a plan's graph --
    C's too (the C-apart tile stores by its map): call 3 writes into out=, a view 16 bytes
    into a NaN-filled buffer, whose head must stay untouched."""
    torch = pytest.importorskip("torch")
    from einc.codegen.cuda import emit_wgmma
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: "wgmma128x256ws")
    monkeypatch.setattr(emit_mma, "MIN_WORK", 0)
    einc.api._EXECUTABLES.clear()
    p = einc.api.plan_for(expr, shapes, "float16", backend="cuda", strategy="gett")
    assert any(emit_step(p, s, "sm_90").tmaps for s in p.steps)
    rng = np.random.default_rng(11)
    for call in range(4):
        arrays = [_data(rng, s, "float16") for s in shapes]
        dev = [torch.from_numpy(a).cuda() for a in arrays]
        if call == 2:  # A as a view 16 bytes into a bigger buffer
            big = torch.zeros(arrays[0].size + 8, dtype=torch.float16, device="cuda")
            big[8:] = dev[0].reshape(-1)
            dev[0] = big[8:].view(*shapes[0])
        out = None
        if call == 3:
            n_out = shapes[0][0] * shapes[-1][-1]
            buf = torch.full((n_out + 8,), float("nan"), dtype=torch.float16, device="cuda")
            out = buf[8:].view(shapes[0][0], shapes[-1][-1])
        got = einc.einsum(expr, *dev, strategy="gett", **({"out": out} if out is not None else {}))
        assert out is None or (got is out and bool(torch.isnan(buf[:8]).all()))
        assert_matches(got.cpu().numpy(), expr, *arrays, terms=136 * (200 if len(shapes) > 2 else 1))


@pytest.mark.gpu
def test_mma_really_ran(monkeypatch):
    """The plan for an fp16 GEMM launches a tensor-core kernel (wgmma on sm_90)."""
    torch = pytest.importorskip("torch")
    from einc.execute_cuda import CudaExecutable
    from einc.runtime.cuda import runtime
    p = einc.api.plan_for("ij,jk->ik", [(256, 256), (256, 256)], "float16", backend="cuda")
    ex = CudaExecutable(p, runtime(0))
    assert [k.name.split("_")[1] for k in ex.kernels] == ["wgmma" if runtime(0).arch == "sm_90" else "mma"]


@pytest.mark.gpu
def test_int8_wraps_like_numpy():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = _data(rng, (130, 300), "int8", wide_ints=True)
    b = _data(rng, (300, 70), "int8", wide_ints=True)
    got = einc.einsum("ij,jk->ik", torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda())
    np.testing.assert_array_equal(got.cpu().numpy(), np.einsum("ij,jk->ik", a, b))
    got32 = einc.einsum("ij,jk->ik", torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), dtype="int32")
    np.testing.assert_array_equal(got32.cpu().numpy(), np.einsum("ij,jk->ik", a, b, dtype=np.int32))


@pytest.mark.gpu
def test_misaligned_operand_takes_the_element_path():
    """A view starting one element in breaks 16-byte alignment: the kernel must notice."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    big = _data(rng, (129 * 136 + 1,), "float16")
    a = big[1:].reshape(129, 136)
    b = _data(rng, (136, 64), "float16")
    ta = torch.from_numpy(big).cuda()[1:].view(129, 136)
    got = einc.einsum("ij,jk->ik", ta, torch.from_numpy(b).cuda())
    assert_matches(got.cpu().numpy(), "ij,jk->ik", a, b, terms=136)


# ---------------------------------------------------------------------------------------
# bfloat16 (numpy has none: ml_dtypes' dtype stands for torch.bfloat16 / DLPack bfloat)

def test_bfloat16_plans_on_tensor_cores_and_is_refused_on_cpu():
    from einc.dtypes import BFLOAT16
    if BFLOAT16 is None:
        pytest.skip("ml_dtypes not installed")
    p = einc.api.plan_for("ij,jk->ik", [(256, 256), (256, 256)], "bfloat16", backend="cuda")
    assert emit_step(p, p.steps[0], "sm_80").name.startswith("einc_mma_bf16")
    assert emit_step(p, p.steps[0], "sm_90").name.startswith("einc_wgmma_bf16")
    a = np.ones((4, 4), dtype=BFLOAT16)
    with pytest.raises(einc.EincTypeError, match="CUDA backend only"):
        einc.einsum("ij,jk->ik", a, a, backend="cpu")
    # ml_dtypes < 0.7 knows no common type of bfloat16 and float16; 0.7 promotes them (to
    # float32), and then the bfloat16 refusal on the CPU applies
    try:
        np.result_type(a.dtype, np.float16)
        refusal = "CUDA backend only"
    except TypeError:
        refusal = "no common type"
    with pytest.raises(einc.EincTypeError, match=refusal):
        einc.einsum("ij,jk->ik", a, a.astype(np.float16), backend="cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("expr,shapes", [
    ("ij,jk->ik", [(200, 136), (136, 72)]), ("ki,kj->ij", [(96, 130), (96, 64)]),
    ("abk,kcd->abcd", [(16, 17, 128), (128, 8, 9)]), ("ij,ij->i", [(300, 77), (300, 77)]),
    ("ij->ji", [(33, 65)]), ("ij,jk->ik", [(20, 30), (30, 10)]),
])
def test_bfloat16_on_gpu(expr, shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    ts = [torch.randn(*s, dtype=torch.float32, device="cuda").to(torch.bfloat16) for s in shapes]
    got = einc.einsum(expr, *ts)
    assert got.dtype == torch.bfloat16
    wide = [t.double().cpu().numpy() for t in ts]
    ref = np.einsum(expr, *wide)
    terms = max(1, int(np.prod(shapes[0])) // max(1, int(np.prod(ref.shape)) or 1))
    # fp32 sums of exact bf16 products, then one rounding to bf16 (8-bit mantissa)
    tol = 2.0 ** -8 * np.abs(ref) + 2.0 ** -22 * terms * np.einsum(expr, *[np.abs(w) for w in wide]) + 1e-30
    assert (np.abs(got.double().cpu().numpy() - ref) <= tol).all()


CLUSTER_CASES = WS_CASES + [
    ("ik,jk->ij", [(1000, 320), (700, 320)], "float16", None, True),   # 6 x 4 tiles: 3 whole pairs a column
    ("ki,jk->ji", [(320, 1000), (700, 320)], "float16", None, True),    # B N-major: k-row halves
    ("ik,jk->ij", [(1000, 320), (900, 320)], "float16", None, True),   # 6 x 5 tiles: "a" pairs vertically
    ("ik,jk->ij", [(900, 320), (900, 320)], "float16", None, True),    # 5 x 5 tiles: no clusters
]


@pytest.mark.gpu
@pytest.mark.parametrize("tile,store_mode", [("wgmma192x192wsp", "0"), ("wgmma192x192wsp4", "1"),
                                             ("wgmma192x192wsp4", "2")])
@pytest.mark.parametrize("mode", ["a", "b"])
@pytest.mark.parametrize("max_grid", [None, 2])
@pytest.mark.parametrize("expr,shapes,dtype,precision,tma_fits", CLUSTER_CASES)
def test_wgmma_cluster_pairs_against_numpy(monkeypatch, expr, shapes, dtype, precision, tma_fits, max_grid, mode,
                                           tile, store_mode):
    """EINC_WGMMA_CLUSTER: 192x192wsp in clusters of two on adjacent tiles, the shared
    operand's slice multicast to both CTAs (each copies half: "b" vertical pairs share B,
    "a" horizontal pairs share A), empty barriers counting both CTAs' consumers. A capped
    grid (one cluster) walks every pair, so the phases carry across pairs; a pair's second
    tile past the edge (odd tile counts) loads zeros and stores nothing."""
    from einc.codegen.cuda import emit_wgmma
    if not tma_fits:
        pytest.skip("clusters need the TMA producer")
    monkeypatch.setattr(emit_wgmma, "CLUSTER", mode)
    monkeypatch.setattr(emit_wgmma, "WIDE_FOUR", store_mode)  # (wsp4: C stored by each warpgroup, or the storer)
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, strategy="gett")
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: tile)
    ks = [emit_step(p, s, "sm_90") for s in p.steps]
    wg = [k for k in ks if k.name.startswith("einc_wgmma")]
    if dtype in ("float16", "bfloat16") and not expr.startswith("b"):
        from einc.codegen.cuda.emit import gett_layout
        got = emit_wgmma.cluster_mode(mode, *gett_layout(p.steps[-1], 192, 192).tiles(192, 192))
        assert any(k.key[-1] == ("cl2" + got if got else "") and ("__cluster_dims__(2, 1, 1)" in k.source) == bool(got)
                   and (k.grid[0] % 2 == 0 or not got) for k in wg)  # (clusters: whole ones)
    test_wgmma_ws_against_numpy(monkeypatch, expr, shapes, dtype, precision, tma_fits, True, True, tile, max_grid)


@pytest.mark.gpu
@pytest.mark.parametrize("fake_fit", [None, 2])
def test_wgmma_cluster_grid_fits_the_card(monkeypatch, fake_fit):
    """The launcher caps a cluster kernel's grid at the clusters resident at once
    (runtime.cuda.cluster_grid: 66 on a 132-SM H100 / H200, more than this case's 12 pairs, so
    the emitted grid stands); a grid lowered at launch (a card fitting ``fake_fit`` clusters)
    still walks every pair."""
    torch = pytest.importorskip("torch")
    import einc.runtime.cuda as rc
    from einc.codegen.cuda import emit_wgmma
    monkeypatch.setattr(emit_wgmma, "CLUSTER", "a")
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: "wgmma192x192wsp")
    real, seen = rc.cluster_grid, []

    def spy(rt, fn, kernel):
        got = real(rt, fn, kernel)
        seen.append((kernel.grid, got))
        return (2 * fake_fit, 1, 1) if fake_fit else got
    monkeypatch.setattr(rc, "cluster_grid", spy)
    einc.api._EXECUTABLES.clear()
    expr, shapes = "ik,jk->ij", [(1000, 320), (700, 320)]  # 6 x 4 tiles: 12 horizontal pairs
    rng = np.random.default_rng(7)
    arrays = [_data(rng, s, "float16") for s in shapes]
    out = _poisoned(torch, (1000, 700), "float16")
    einc.einsum(expr, *[torch.from_numpy(a).cuda() for a in arrays], out=out, strategy="gett")
    einc.api._EXECUTABLES.clear()
    assert seen and all(grid == (24, 1, 1) and got == grid for grid, got in seen), seen
    assert_matches(out.cpu().numpy(), expr, *arrays, terms=320)


@pytest.mark.parametrize("mode", ["a", "b"])
@pytest.mark.parametrize("expr,shapes,dtype", [("ki,jk->ji", [(320, 1000), (700, 320)], "float16"),
                                               ("ik,jk->ij", [(1000, 320), (704, 320)], "bfloat16")])
def test_wgmma_cluster_kernels_compile(monkeypatch, expr, shapes, dtype, mode):
    """The cluster variants (both B layouts; the shared operand's box is half a slice)
    compile for sm_90a without a GPU, their grids whole clusters."""
    from einc.codegen.cuda import emit_wgmma
    from einc.runtime.cuda import compile_cubin
    monkeypatch.setattr(emit_wgmma, "CLUSTER", mode)
    k = kernel(expr, shapes, dtype, None, "wgmma192x192wsp", arch="sm_90")
    assert k.key[-1] == "cl2" + mode and k.grid[0] % 2 == 0 and "__cluster_dims__(2, 1, 1)" in k.source
    if mode == "b":  # half of (64, 64) N-major or (64, 192) K-major
        assert k.tmaps[0].box == (64, 192) and k.tmaps[1].box in ((64, 32), (64, 96))
    else:
        assert k.tmaps[0].box == (64, 96) and k.tmaps[1].box in ((64, 64), (64, 192))
    assert compile_cubin(k.source, k.name, dict(compile_options("sm_90"), arch=k.arch))[:4] == b"\x7fELF"
    import io

    from cuda.core import Program, ProgramOptions
    log = io.StringIO()  # no spills, and no wgmma serialised by ptxas (C7515)
    Program(k.source, "c++", ProgramOptions(**dict(compile_options(k.arch), ptxas_options="-v"))).compile(
        "cubin", logs=log)
    assert "0 bytes spill stores, 0 bytes spill loads" in log.getvalue() and "C7515" not in log.getvalue()
    monkeypatch.setattr(emit_wgmma, "CLUSTER", "")
    assert kernel(expr, shapes, dtype, None, "wgmma192x192wsp", arch="sm_90").key[-1] == ""


def test_explain_names_the_cluster_pairing(monkeypatch):
    """`einc explain` says which operand a clustered 192x192 tile's pairs share, as the
    emitter pairs them (the even tile count), and nothing with clusters off."""
    from einc.codegen.cuda import emit_wgmma
    from einc.cost import explain_lines

    def line(shapes):
        p = einc.api.plan_for("ki,jk->ji", shapes, "bfloat16", backend="cuda")
        return explain_lines(p)[0][-1]
    monkeypatch.setattr(emit_wgmma, "CLUSTER", "a")
    assert "wgmma192x192wsp (TMA) clusters of 2 sharing A" in line([(7248, 7248), (7240, 7248)])  # 38 x 38 tiles
    assert "clusters of 2 sharing B" in line([(7248, 7040), (7240, 7248)])   # M = j 38 tiles, N = i 37
    monkeypatch.setattr(emit_wgmma, "CLUSTER", "")
    assert "clusters" not in line([(7248, 7248), (7240, 7248)])
