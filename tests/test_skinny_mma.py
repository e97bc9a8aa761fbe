"""The tensor-core skinny kernel (kernels/skinny_mma.cuh): fp16 / bf16 steps with a small
N (or M) group on mma.sync, against numpy.

Without a GPU: every variant (M-fast and K-fast A, 16-byte pieces and the element twin,
tabled K, the three epilogue orders, one and two m16 tiles a warp, swapped operands)
compiles with NVRTC for sm_90 without spills, the dispatch picks it for the intensli
shapes, and steps below the tensor cores' work threshold (the CPU emulator's) keep the
converting path. On the GPU: all eight TCCG intensli layouts at reduced sizes, ragged N and
K (N = 2, 7, 24, 32; K = 0, 2, 15, 17, several B chunks: an extent-1 N or K mode is no
group, so N = 1 or K = 1 never reaches skinny), views one element off alignment, batch and
rest modes, both dtypes, outputs poisoned with NaN.
"""

import numpy as np
import pytest

import einc
from einc import api
from einc.codegen.cuda import emit_skinny, emit_skinny_mma
from einc.codegen.cuda.emit import emit_step

from test_cuda_codegen import ptxas

# TCCG intensli (bf16 there), reduced: (subscripts, sizes, what it pins)
INTENSLI = [
    ("akb,jk->jba", "a=40,b=48,j=24,k=40", "M-fast A, C staged along a (Y)"),
    ("abk,kj->bja", "a=40,b=37,j=24,k=40", "K-fast A, C along X"),
    ("akbc,jk->cjba", "a=16,b=10,c=24,j=24,k=20", "M-fast, rest b, ragged K slice"),
    ("abkc,kj->cbja", "a=16,b=10,c=24,j=24,k=18", "M-fast, strided K"),
    ("cabk,kj->cjba", "a=12,b=10,c=20,j=24,k=24", "K-fast, rest b, ragged X"),
    ("cabkd,kj->dcjba", "a=8,b=6,c=6,d=16,j=24,k=12", "M-fast, X folds c"),
    ("akdbc,jk->cjbda", "a=8,b=6,c=16,d=6,j=24,k=16", "M-fast, X folds d"),
    ("dabkc,kj->cdbja", "a=8,b=6,c=16,d=6,j=24,k=12", "M-fast, X folds d, rest b"),
]
# ragged N and K, K in several B chunks, tabled K, batch / rest, N-fast C, one axis, swapped
EDGES = [
    ("akb,jk->jba", "a=40,b=48,j=2,k=40", "N = 2 (N = 1 is no N group: no skinny step)"),
    ("akb,jk->jba", "a=40,b=48,j=7,k=17", "N = 7, K = 17"),
    ("akb,jk->jba", "a=40,b=48,j=32,k=15", "N = 32, K = 15"),
    ("akb,jk->jba", "a=40,b=48,j=24,k=2", "K = 2 (K = 1 is no K group: an outer product)"),
    ("akb,jk->jba", "a=40,b=48,j=24,k=0", "K = 0 gives zeros"),
    ("abk,kj->bja", "a=40,b=37,j=7,k=17", "K-fast, N = 7, K = 17: partial pieces"),
    ("abk,kj->bja", "a=40,b=37,j=32,k=15", "K-fast, K = 15: unaligned rows, element path"),
    ("abk,kj->bja", "a=33,b=37,j=32,k=0", "K-fast, K = 0"),
    ("akb,jk->jba", "a=16,b=24,j=32,k=1000", "K over three B chunks"),
    ("kacb,jkc->jba", "a=6,b=48,c=3,j=24,k=5", "tabled K, M-fast pieces"),
    ("akbc,jkc->jba", "a=40,b=70,c=3,j=24,k=5", "tabled K, K-fast A: element path"),
    ("bik,bkj->bij", "b=3,i=700,j=20,k=24", "batch moves B per tile, C N-fast"),
    ("bki,bkj->bji", "b=3,i=700,j=20,k=24", "batch, M-fast A, C along X"),
    ("ik,kj->ij", "i=3000,j=24,k=40", "one axis, K-fast A, C N-fast"),
    ("ki,kj->ij", "i=3000,j=24,k=40", "one axis, M-fast A, C N-fast"),
    ("ki,kj->ji", "i=3000,j=24,k=40", "one axis, M-fast A, C along X"),
    ("jk,akb->jba", "a=40,b=48,j=24,k=40", "small group on the M side: swapped"),
]
MISALIGNED = [c for c in INTENSLI[:2] + INTENSLI[5:6]]
# TMA boxes (sm_90) cut by every end: ragged X, Y and K, x2 and rest dimensions, K-fast
TMA_EDGES = [
    ("akb,jk->jba", "a=60,b=200,j=24,k=100", "M-fast, X 200 / 16, Y 60 / 16, K 100 / 32"),
    ("abk,kj->bja", "a=200,b=37,j=24,k=40", "K-fast, X 200 / 32, Y 37 / 4, K 40 / 32"),
    ("bkac,jk->cjba", "a=20,b=6,c=48,j=24,k=40", "M-fast, X folds b (u0 48; b outermost, past k), Y 20 / 16"),
    ("cabkd,kj->dcjba", "a=8,b=6,c=6,d=16,j=7,k=52", "five dimensions, N = 7, K 52 / 32"),
]
FULL = {"akb,jk->jba": "a=384,b=384,j=24,k=384", "abk,kj->bja": "a=384,b=376,j=24,k=384",
        "akbc,jk->cjba": "a=96,b=84,c=96,j=24,k=96", "abkc,kj->cbja": "a=96,b=84,c=96,j=24,k=84",
        "cabk,kj->cjba": "a=96,b=84,c=84,j=24,k=96", "cabkd,kj->dcjba": "a=48,b=36,c=36,d=48,j=24,k=36",
        "akdbc,jk->cjbda": "a=48,b=36,c=48,d=36,j=24,k=48", "dabkc,kj->cdbja": "a=48,b=36,c=48,d=36,j=24,k=36"}


def _full(subs):
    return FULL[subs]


def _shapes(subs, sizes):
    d = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sizes.split(",")}
    return [tuple(d[c] for c in t) for t in subs.split("->")[0].split(",")]


@pytest.fixture
def small(monkeypatch):
    """Reduced sizes still take skinny and its tensor-core kernel."""
    monkeypatch.setattr(emit_skinny, "MIN_ROWS", 1)
    monkeypatch.setattr(emit_skinny_mma, "MMA_MIN_WORK", 1)
    monkeypatch.setenv("EINC_SKINNY", "1")
    api._EXECUTABLES.clear()
    yield monkeypatch
    api._EXECUTABLES.clear()


def _family(k):
    return next(line for line in k.source.splitlines() if line.startswith("// strategy:"))


def _kernel(subs, sizes, dtype):
    p = api.plan_for(subs, _shapes(subs, sizes), dtype, backend="cuda", strategy="gett")
    assert ("tile", "skinny") in p.steps[-1].config
    return emit_step(p, p.steps[-1])


@pytest.mark.parametrize("mi", [1, 2])
@pytest.mark.parametrize("subs,sizes,what", INTENSLI + EDGES, ids=[c[2] for c in INTENSLI + EDGES])
def test_every_variant_compiles_for_sm90_without_spills(small, subs, sizes, what, mi):
    small.setenv("EINC_SKINNY_MMA_MI", str(mi))
    k = _kernel(subs, sizes, "bfloat16" if mi == 2 else "float16")
    assert k.name.startswith("einc_skinny_mma_") and f"{mi} m16 tile(s) a warp" in k.source
    for kk in (k, k.fallback) if k.fallback is not None else (k,):
        regs, st, ld, log = ptxas(kk)
        assert 0 < regs <= (128 if mi == 2 else 85) and st == 0 and ld == 0, log
    assert (k.fallback is not None) == ("16-byte cp.async" in _family(k) or "TMA boxes" in _family(k))


def test_variants_pick_their_paths(small):
    small.setattr(emit_skinny_mma, "TMA", False)  # the threads' own copies (sm_80, or no map fits)
    src = lambda subs, sizes: _family(_kernel(subs, sizes, "bfloat16"))
    assert "[k][m] read by ldmatrix.trans" in src(*INTENSLI[0][:2]) and "stored along Y" in src(*INTENSLI[0][:2])
    assert "16-byte cp.async pieces of 8 k" in src(*INTENSLI[1][:2]) and "stored along X" in src(*INTENSLI[1][:2])
    assert "element loads" in src("akbc,jkc->jba", "a=40,b=70,c=3,j=24,k=5")
    assert "16-byte cp.async pieces of 8 rows" in src("kacb,jkc->jba", "a=6,b=48,c=3,j=24,k=5")
    assert "stored along N" in src("bik,bkj->bij", "b=3,i=700,j=20,k=24")
    assert "operands swapped" in src("jk,akb->jba", "a=40,b=48,j=24,k=40")
    k = _kernel("akb,jk->jba", "a=40,b=48,j=24,k=40", "bfloat16")
    assert k.aligned == (1,) and "einc_skinny_mma<" in k.source and "element loads" in _family(k.fallback)


def test_sm90_slices_come_by_tma_where_a_map_describes_them(small):
    """On sm_90 a slice of A is one TMA box: the map's dimensions run x [x2] k [y] [rest]
    (M-fast) or k x [x2] [y] [rest] (K-fast) with A's byte strides, the box is BX x BK x BY,
    and the swizzle spans one box row. Tabled K, an M-fast single axis (rows of BM), an x2
    that a box would straddle, an x2 nearer in memory than k (akdbc: slower by TMA on an
    H100), and sm_80 keep the threads' copies."""
    small.setattr(emit_skinny_mma, "TMA", True)
    k = _kernel("akb,jk->jba", _full("akb,jk->jba"), "bfloat16")
    (tm,) = k.tmaps
    assert (tm.ptr, tm.dims, tm.strides, tm.box, tm.swizzle) == (1, (384, 384, 384), (768, 294912), (32, 32, 8), "64B")
    assert "TMA boxes (32, 32, 8)" in _family(k) and "EincTmap tm" in k.source and k.fallback.tmaps == ()
    # akbc: x c, k, y a, rest b, BX 16: 32-byte rows
    (tm,) = _kernel("akbc,jk->cjba", _full("akbc,jk->cjba"), "bfloat16").tmaps
    assert (tm.dims, tm.strides, tm.box, tm.swizzle) == ((96, 96, 96, 84), (16128, 1548288, 192), (16, 32, 16, 1), "32B")
    # K-fast abk: k first, rows of 32 k (64 bytes)
    (tm,) = _kernel("abk,kj->bja", _full("abk,kj->bja"), "bfloat16").tmaps
    assert (tm.dims, tm.strides, tm.box, tm.swizzle) == ((384, 384, 376), (288768, 768), (32, 32, 4), "64B")
    # cabkd: x d folds b (u0 48, a multiple of BX 16): five dimensions
    (tm,) = _kernel("cabkd,kj->dcjba", _full("cabkd,kj->dcjba"), "bfloat16").tmaps
    assert tm.dims == (48, 36, 36, 48, 36) and tm.box == (16, 1, 32, 16, 1)
    for subs, sizes in [("kacb,jkc->jba", "a=6,b=48,c=3,j=24,k=5"),  # tabled K
                        ("ki,kj->ij", "i=3000,j=24,k=40"),  # M-fast, one axis
                        ("cabkd,kj->dcjba", "a=8,b=6,c=6,d=24,j=24,k=12"),  # u0 24 against BX 16
                        ("akdbc,jk->cjbda", _full("akdbc,jk->cjbda"))]:  # x2 d (1728) nearer than k (62208)
        assert _kernel(subs, sizes, "bfloat16").tmaps == (), subs
    p = api.plan_for("akb,jk->jba", _shapes("akb,jk->jba", _full("akb,jk->jba")), "bfloat16", backend="cuda")
    assert emit_step(p, p.steps[-1], "sm_80").tmaps == ()


def _tma_walk(k):
    """Every element of a sample of TMA boxes (the first and last tiles, the first and last
    slices) as the kernel asks for it: (in the map's bounds, element offset through the map)
    beside (in the box, offset) by the threads' own addressing (meta fields and rest table,
    the cp.async path's a_row + k offset)."""
    w, (tm,) = k.words, k.tmaps
    U, V, _, K, R, tiles_x, tiles_y, a_x, a_y, _, _, a_k, _, _, u0, a_x2 = w[:16]
    ra = np.asarray(k.tables[0])
    bx, bk, (kfast, *_), bits = k.key[4], k.key[6], k.key[10], k.key[13]
    bm = k.key[3] * k.block[0] // 2
    by = bm // bx
    x2, hy, hr = bool(bits & 2), bool(bits & 4), bool(bits & 8)
    strides = [1] + [st // 2 for st in tm.strides]
    per_rest = tiles_x * tiles_y
    tiles = per_rest * R
    nk = -(-K // bk)
    for t in sorted({*range(min(tiles, 40)), *range(max(0, tiles - 40), tiles)}):
        r, rem = divmod(t, per_rest)
        ty, tx = divmod(rem, tiles_x)
        x0, y0 = tx * bx, ty * by
        for kt in sorted({0, nk - 1}):
            kb = kt * bk
            c = ([kb] if kfast else []) + [x0 % u0 if x2 else x0] + ([x0 // u0] if x2 else []) \
                + ([] if kfast else [kb]) + ([y0] if hy else []) + ([r] if hr else [])
            assert len(c) == len(tm.dims)
            for m in range(bm):
                xl, yl = m % bx, m // bx
                for kl in range(bk):
                    b = ([kl] if kfast else []) + [xl] + ([0] if x2 else []) + ([] if kfast else [kl]) \
                        + ([yl] if hy else []) + ([0] if hr else [])
                    at = [ci + bi for ci, bi in zip(c, b)]
                    inside = all(a < d for a, d in zip(at, tm.dims))
                    x, y, kk = x0 + xl, y0 + yl, kb + kl
                    ref_in = x < U and y < V and kk < K
                    xoff = (x % u0) * a_x + (x // u0) * a_x2 if u0 != U else x * a_x
                    yield (inside, sum(a * st for a, st in zip(at, strides)) if inside else None,
                           ref_in, int(ra[r]) + xoff + y * a_y + kk * a_k if ref_in else None)


@pytest.mark.parametrize("subs,sizes", [(c[0], c[1]) for c in TMA_EDGES] + [
    ("akb,jk->jba", _full("akb,jk->jba")), ("dabkc,kj->cdbja", _full("dabkc,kj->cdbja")),
    ("bik,bkj->bij", "b=3,i=700,j=20,k=24"), ("ik,kj->ij", "i=3000,j=24,k=40")])
def test_the_tma_map_reaches_what_the_copies_read(small, subs, sizes):
    """The tensor map and the kernel's box coordinates (M-fast x [x2] k [y] [rest], K-fast
    k x [x2] [y] [rest]) against skinny's own addressing, element by element: the same
    elements in bounds (the map's zero fill is the copies' zero fill past X, Y and K) at the
    same offsets in A, the rest table, the x2 fold and ragged ends included."""
    small.setattr(emit_skinny_mma, "TMA", True)
    k = _kernel(subs, sizes, "bfloat16")
    assert k.tmaps
    n = 0
    for inside, off, ref_in, ref in _tma_walk(k):
        assert (inside, off) == (ref_in, ref)
        n += 1
    assert n > 0


@pytest.mark.parametrize("rb", [16, 32, 64, 128])
def test_swizzled_rows_put_each_ldmatrix_phase_in_eight_bank_groups(rb):
    """EincSkinnyMmaRing's TMA layout (rows of rb bytes, the 16-byte chunk c at c ^ address
    bits 7.. under the row's span): the eight rows one ldmatrix phase reads -- 8 k at one
    M-fast chunk (.trans), or 8 rows at one K-fast chunk -- fall in distinct bank groups."""
    swm = rb // 16 - 1 if rb >= 32 else 0
    swz = lambda lin: lin ^ (((lin >> 7) & swm) << 4)
    bk = 32
    for base_row in range(0, 4 * bk, 8):  # M-fast: rows are k (of one y); K-fast: rows are m
        for chunk in range(rb // 16):
            groups = {(swz(row * rb + 16 * chunk) >> 4) & 7 for row in range(base_row, base_row + 8)}
            assert len(groups) == 8, (rb, base_row, chunk)


def test_a_heavy_box_takes_longer_a_runs():
    """C stored along Y (order 1) in runs of BY, A read in runs of BX: where C is small beside
    A (N <= K / 8, intensli akb) the box doubles BX (32 x 8 at 256 rows); elsewhere BY stays
    16 (C's 32-byte runs: the C-heavy five-mode cases halved at BY 8, NOTES session 7)."""
    fam = lambda subs: _family(_kernel(subs, _full(subs), "bfloat16"))
    assert "every block owns 32 X x 8 Y rows" in fam("akb,jk->jba")  # N 24, K 384
    for subs in ("akbc,jk->cjba", "cabkd,kj->dcjba", "dabkc,kj->cdbja"):  # K 96, 36, 36
        assert "every block owns 16 X x 16 Y rows" in fam(subs), subs


@pytest.mark.parametrize("subs,sizes,what", INTENSLI, ids=[c[2] for c in INTENSLI])
def test_full_size_intensli_bf16_plans_the_tensor_core_kernel(subs, sizes, what):
    p = api.plan_for(subs, _shapes(subs, _full(subs)), "bfloat16", backend="cuda")
    assert ("tile", "skinny") in p.steps[-1].config
    k = emit_step(p, p.steps[-1])
    assert k.name.startswith("einc_skinny_mma_bf16"), k.name
    (text,) = [s for s in einc.compile_source(subs, *_shapes(subs, _full(subs)), dtype="bfloat16", target="cuda")
               if "skinny_mma" in s][:1]
    assert "strategy: skinny_mma (tensor cores: mma.sync m16n8k16 bf16" in text


def test_small_steps_keep_the_converting_path_the_emulator_runs():
    """Below the mma kernels' work threshold (and so in every CPU-emulator case) fp16 skinny
    steps stay on skinny.cuh's converting path: the emulator has no mma or ldmatrix."""
    p = api.plan_for("akb,jk->jba", [(40, 9, 70), (24, 9)], "float16", backend="cuda", strategy="gett")
    k = emit_step(p, p.steps[-1], gett_tile="skinny")
    assert k.name.startswith("einc_skinny_") and not k.name.startswith("einc_skinny_mma")


def test_switch_turns_it_off(monkeypatch):
    monkeypatch.setenv("EINC_SKINNY_MMA", "0")
    p = api.plan_for("akdbc,jk->cjbda", _shapes("akdbc,jk->cjbda", _full("akdbc,jk->cjbda")), "bfloat16",
                     backend="cuda", strategy="gett")
    assert not emit_step(p, p.steps[-1], gett_tile="skinny").name.startswith("einc_skinny_mma")


# ---------------------------------------------------------------------------------------
# on the GPU

_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _run(subs, sizes, dtype, misaligned=False):
    """einc on torch tensors (16-bit data, NaN-poisoned output) against numpy's float64
    einsum of the same values, with assert_matches' bound for 16-bit inputs."""
    torch = pytest.importorskip("torch")
    tdt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(len(subs) * 31 + len(sizes))
    ops = []
    for s in _shapes(subs, sizes):
        n = int(np.prod(s))
        flat = torch.randn(n + misaligned, generator=gen).to(tdt).cuda()
        ops.append(flat[misaligned:].view(s))
        if misaligned:
            assert ops[-1].data_ptr() % 16 == 2
    host = [o.float().cpu().numpy().astype(np.float64) for o in ops]
    ref = np.einsum(subs, *host, optimize=True)
    absref = np.abs(np.einsum(subs, *[np.abs(h) for h in host], optimize=True))
    out = torch.full(ref.shape, float("nan"), dtype=tdt, device="cuda")
    r = einc.einsum(subs, *ops, out=out, backend="cuda", strategy="gett")
    assert r is out
    got = out.float().cpu().numpy().astype(np.float64)
    lhs, rhs = subs.split("->")
    ext = dict(zip(lhs.replace(",", ""), sum(map(list, _shapes(subs, sizes)), [])))
    terms = max(1, int(np.prod([n for l, n in ext.items() if l not in rhs])))
    tol = (2.0 ** -23 * (terms + 2) * 4 + _EPS[dtype]) * absref + 1e-30
    assert not np.isnan(got).any(), "unwritten (poisoned) outputs"
    err = np.abs(got - ref)
    assert (err <= tol).all(), f"max error {err.max()} at {np.argwhere(err > tol)[:3]}"


@pytest.mark.gpu
@pytest.mark.parametrize("mi", [1, 2])
@pytest.mark.parametrize("subs,sizes,what", INTENSLI, ids=[c[2] for c in INTENSLI])
def test_gpu_intensli_layouts(small, subs, sizes, what, mi):
    small.setenv("EINC_SKINNY_MMA_MI", str(mi))
    assert _kernel(subs, sizes, "bfloat16").name.startswith("einc_skinny_mma_")
    _run(subs, sizes, "bfloat16")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("subs,sizes,what", EDGES, ids=[c[2] for c in EDGES])
def test_gpu_edges(small, subs, sizes, what, dtype):
    assert _kernel(subs, sizes, dtype).name.startswith("einc_skinny_mma_")
    _run(subs, sizes, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("subs,sizes,what", MISALIGNED, ids=[c[2] for c in MISALIGNED])
def test_gpu_misaligned_views_take_the_element_twin(small, subs, sizes, what, dtype):
    _run(subs, sizes, dtype, misaligned=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("subs,sizes,what", TMA_EDGES, ids=[c[2] for c in TMA_EDGES])
def test_gpu_tma_boxes_at_ragged_ends(small, subs, sizes, what, dtype):
    small.setattr(emit_skinny_mma, "TMA", True)
    assert _kernel(subs, sizes, dtype).tmaps, "takes the TMA slices"
    _run(subs, sizes, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("subs", ["akb,jk->jba", "cabkd,kj->dcjba"])
def test_gpu_full_size_bf16(subs):
    """The real intensli sizes on the plan's own choice (the tensor-core skinny kernel)."""
    api._EXECUTABLES.clear()
    _run(subs, _full(subs), "bfloat16")


def test_explain_names_the_kernel_that_runs():
    """The cost model's label for a skinny step is the family emit_skinny dispatches to:
    skinny_mma for the 16-bit intensli shapes, skinny for fp32 and for the small fp16 steps
    that keep the converting path."""
    from einc.cost import predict_step
    for shapes, dtype, family in [([(96, 96, 84, 96), (24, 96)], "bfloat16", "skinny_mma"),
                                  ([(96, 96, 84, 96), (24, 96)], "float16", "skinny_mma"),
                                  ([(96, 96, 84, 96), (24, 96)], "float32", "skinny")]:
        p = api.plan_for("akbc,jk->cjba", shapes, dtype, backend="cuda")
        s = p.steps[-1]
        assert predict_step(p, s).family == family
        assert emit_step(p, s, "sm_90").name.startswith(f"einc_{family}_")
