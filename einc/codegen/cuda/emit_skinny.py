"""GEMM steps with a small N (or M) group: the `skinny` kernel (kernels/skinny.cuh).

A gett step whose N group (or, swapping the operands, its M group) has at most ``NP_MAX``
elements while the other one is large (TCCG's intensli cases: N = j = 24, M in the
millions) is memory-bound. The skinny kernel keeps every column of a row in registers,
streams the big operand once along its unit-stride mode, and writes C along its own
unit-stride mode (through shared memory when the two differ).

>>> import einc.api
>>> from einc.codegen.cuda.emit import emit_step
>>> p = einc.api.plan_for("akb,jk->jba", [(384, 64, 384), (24, 64)], "float32", backend="cuda")
>>> k = emit_step(p, p.steps[0])
>>> k.name.startswith("einc_skinny_"), k.block
(True, (256, 1, 1))
"""
from __future__ import annotations

import os
import dataclasses
from dataclasses import dataclass

import numpy as np

from ...ir import Step
from .emit import (_ACC_SIZE, sm_count, VERSION, CudaStepKernel, _assemble, _cdiv,
                   _gett_applies, _group_offsets, _header, _label, _merge, _name, _types)
from .emit_smallmn import fp64_tensor_cores

NP_MAX = 32  # columns a thread keeps in registers (RM x NP accumulators)
MIN_ROWS = 4096  # big-group elements (x batch) below which the GEMM tiles are as good
RM, BK, S = 2, 8, 4  # rows per thread, k per slice, cp.async stages
KC_BYTES = 36 * 1024  # shared memory for one chunk of B (TCCG intensli: all of K = 384 x 24 fp32)
TILE = "skinny"
KSPLIT_MIN_SLICES = 2  # BK-slices a K range of a split tile takes at least
# fp32 steps with K-fast A whose C is stored per row, or M-fast A through the 16-byte ring,
# multiply on the fp64 tensor cores (mma m16n8k8 .f64: exact products, 53-bit sums, one
# rounding per output) -- the M-fast ring only for few tiles (emit_skinny) -- on GPUs with
# full-rate fp64 tensor cores (emit_smallmn.fp64_tensor_cores); EINC_SKINNY_DMMA=0 keeps FFMA rows
DMMA = os.environ.get("EINC_SKINNY_DMMA", "1") != "0"
MFAST_DMMA_WAVES = 3  # M-fast ring: fragments only for at most this many tiles per SM (see emit_skinny)
SMEM_PER_SM = 233472  # H100/H200: 228 KB of shared memory per SM, 1 KB of it reserved per block


@dataclass(frozen=True)
class SkinnyLayout:
    """The step as C[r, x, y, n] = sum_k A[r, x, y, k] B[r, k, n] (see skinny.cuh).

    ``ta``/``tb``: the step tensors (1, 2) acting as A and B; ``x``/``y``: (extent, (sC, sA,
    sB)) of the box axes (y None when M has one mode); ``rest``/``n``/``k``: mode lists.
    """

    ta: int
    tb: int
    x: tuple
    y: tuple | None
    rest: list
    n: list
    k: list
    stage_c: bool
    b_kfast: bool
    labels: dict
    stage_n: bool = False  # C unit-stride along N: warps stage rows and store them whole
    x2: tuple | None = None  # an M mode folded into X (flat x + U x2) so ragged X fills the lanes


def _groups(step: Step, ta: int, tb: int):
    """Mode lists (extent, (sC, sA, sB)) per kernel group, with A/B as ta/tb."""
    small, big = ("n", "m") if ta == 1 else ("m", "n")
    out = {"rest": [], "big": [], "n": [], "k": []}
    labels = {"rest": [], "big": [], "n": [], "k": []}
    for j, m in enumerate(step.modes):
        st = (step.strides[0][j], step.strides[ta][j], step.strides[tb][j])
        g = {"batch": "rest", big: "big", small: "n", "k": "k"}.get(m.kind)
        if g is None:
            return None
        out[g].append((m.extent, st))
        labels[g].append(_label(m.label))
    return out, labels


def skinny_layout(step: Step, min_rows: int | None = None) -> SkinnyLayout | None:
    """The skinny view of a gett step, or None when it has no small group (of at most
    NP_MAX elements, against at least ``min_rows`` in the big group times the batch)."""
    if len(step.operands) != 2:
        return None
    min_rows = MIN_ROWS if min_rows is None else min_rows
    ext = {g: int(np.prod([m.extent for m in step.modes if m.kind == g], dtype=np.int64))
           for g in ("batch", "m", "n", "k")}
    if ext["n"] <= NP_MAX and ext["m"] * ext["batch"] >= min_rows:
        ta, tb = 1, 2
    elif ext["m"] <= NP_MAX and ext["n"] * ext["batch"] >= min_rows:
        ta, tb = 2, 1
    else:
        return None
    got = _groups(step, ta, tb)
    if got is None:
        return None
    g, labels = got
    big = sorted(g["big"], key=lambda e: -abs(e[1][1]) if e[1][1] else float("-inf"))
    big = _merge(big)  # A's order; merge what is contiguous in C and A alike
    unit = lambda mode, t: abs(mode[1][t]) == 1
    a_fast = next((b for b in big if unit(b, 1)), None)
    c_fast = next((b for b in big if unit(b, 0)), None)
    # X: the lane axis, along A's unit stride if it is in M, else C's, else the largest
    x = a_fast or c_fast or max(big, key=lambda e: e[0])
    others = [b for b in big if b is not x]
    stage_c = False
    if c_fast is not None and c_fast is not x:
        y, stage_c = c_fast, a_fast is not None  # lanes on A's unit stride: stores go through smem
    else:
        y = max(others, key=lambda e: e[0]) if others else None
    rest = [b for b in others if b is not y]
    k = _merge(sorted(g["k"], key=lambda e: -abs(e[1][1])))
    b_kfast = any(abs(st[2]) == 1 for _, st in k)
    stage_n = not stage_c and any(abs(st[0]) == 1 for e, st in g["n"] if e > 1)
    x2 = _fold_x2(x, rest) if y is not None and not stage_n else None
    rest = [b for b in rest if b is not x2] + g["rest"]
    return SkinnyLayout(ta, tb, x, y, rest, g["n"], k, stage_c, b_kfast, labels, stage_n, x2)


def _fold_x2(x, rest):
    """The M mode (of ``rest``, no batch mode: B must not move within a tile) to fold into
    X when X's extent leaves lanes idle: akdbc's X = c = 48 runs tiles of 32 + 16 lanes
    (75%), c x d = 1728 fills 54 tiles. None when X is a multiple of 32 or nothing helps."""
    U = x[0]
    if U % 32 == 0 or os.environ.get("EINC_SKINNY_X2") == "0":
        return None
    best, best_fill = None, U / (_cdiv(U, 32) * 32)
    for m in rest:
        flat = U * m[0]
        fill = flat / (_cdiv(flat, 32) * 32)
        if flat < 2 ** 31 and fill > best_fill + 1e-9:
            best, best_fill = m, fill
    return best


def skinny_applies(step: Step, dtypes, compute) -> bool:
    """Whether the skinny kernel can run ``step`` (a real GEMM-shaped step with a small group)."""
    return _gett_applies(step, dtypes, compute) and skinny_layout(step) is not None


def skinny_meta(lay: SkinnyLayout, kc: int, whole: int, tiles_x: int, tiles_y: int, kparts: int = 0) -> tuple:
    """(tables, words): EincSkinnyMeta's offset tables (rest in A, B, C; K in A and B when
    tabled; N in B and C) and its fields in order, shared by skinny and skinny_mma."""
    rest = [_group_offsets(lay.rest, t) for t in (1, 2, 0)]
    tab_k = len(lay.k) > 1
    tables = rest + ([_group_offsets(lay.k, 1), _group_offsets(lay.k, 2)] if tab_k else [])
    tables += [_group_offsets(lay.n, 2), _group_offsets(lay.n, 0)]
    ext = lambda modes: int(np.prod([e for e, _ in modes], dtype=np.int64)) if modes else 1
    ys = lay.y[1] if lay.y else (0, 0, 0)
    k1 = lay.k[0][1] if len(lay.k) == 1 else (0, 0, 0)
    x2s = lay.x2[1] if lay.x2 else (0, 0, 0)
    U0 = lay.x[0]
    U = U0 * (lay.x2[0] if lay.x2 else 1)
    words = [U, lay.y[0] if lay.y else 1, ext(lay.n), ext(lay.k), len(rest[0]), tiles_x, tiles_y, lay.x[1][1],
             ys[1], lay.x[1][0], ys[0], k1[1], k1[2], kc, U0, x2s[1], x2s[0], whole, kparts,
             ("table", 0), ("table", 1), ("table", 2)]
    words += [("table", 3), ("table", 4)] if tab_k else [0, 0]
    words += [("table", len(tables) - 2), ("table", len(tables) - 1)]
    return tables, words


def skinny_modes_line(lay: SkinnyLayout) -> str:
    L = lay.labels
    return (f"rest {' '.join(L['rest']) or '-'} | big {' '.join(L['big'])} | small {' '.join(L['n'])} | "
            f"k {' '.join(L['k'])}" + (f" | X folds in a mode of extent {lay.x2[0]}" if lay.x2 else ""))


def emit_skinny(step: Step, dtypes, compute, arch: str = "sm_90") -> CudaStepKernel:
    from .emit_skinny_mma import emit_skinny_mma, skinny_mma_applies
    if skinny_mma_applies(step, dtypes, compute):  # fp16/bf16: tensor cores (skinny_mma.cuh)
        return emit_skinny_mma(step, dtypes, compute, arch=arch)
    lay = skinny_layout(step, min_rows=1)
    assert lay is not None, "skinny_applies() first"
    N = int(np.prod([e for e, _ in lay.n], dtype=np.int64)) if lay.n else 1
    NP = max(8, _cdiv(N, 8) * 8)
    K = int(np.prod([e for e, _ in lay.k], dtype=np.int64)) if lay.k else 1
    tab_k = len(lay.k) > 1
    one_axis = lay.y is None

    tout, tcn, tan, tin = _types(dtypes, compute)
    sa, sb = tin[lay.ta - 1], tin[lay.tb - 1]
    acc = _ACC_SIZE[tan]
    a_item = dtypes[lay.ta].itemsize
    async_ok = compute.name in ("float32", "float64", "int32", "int64") and all(d == compute for d in dtypes[1:])
    # A K-fast (its unit stride is the one K mode): 16-byte pieces through a shared ring,
    # two rows per thread like M-fast A (B's shared loads per FMA halved: ncu on abk showed
    # the shared-memory pipe as the top stall with one row); EINC_SKINNY_KFAST_RM=1 for A/B
    a_kfast = async_ok and a_item == 4 and not tab_k and lay.k[0][1][1] == 1 if lay.k else False
    # ... except on the fp64 fragments (below): one row per thread there (116 registers, so two
    # blocks per SM; sessions 12b-d, same runs: cabk 0.149-0.163 ms against 0.179-0.199 with two
    # rows and one block, abk 0.135-0.147 against 0.143-0.153; EINC_SKINNY_DM_MINB=1 the same)
    dm_ok = (DMMA and fp64_tensor_cores(arch) and compute.name == "float32" and not lay.stage_n
             and os.environ.get("EINC_SKINNY_KSPLIT") != "1")  # (the fragments' conditions but the A path's)
    kfast_dm = dm_ok and a_kfast and not lay.stage_c
    rm = int(os.environ.get("EINC_SKINNY_KFAST_RM", 1 if kfast_dm else RM)) if a_kfast else RM
    # EINC_SKINNY_RM=4 (experiments): four rows per thread halve B's shared loads per FMA but
    # need a block per SM; measured slower on the H200 (akdbc,jk->cjbda 11.6 -> 7.5 TFLOP/s)
    rm = int(os.environ.get("EINC_SKINNY_RM", rm)) if not a_kfast else rm
    TY, BM_ROWS = 8 * rm, 256 * rm
    # M-fast A in 16-byte pieces (a barrier per slice, a quarter of the copies); the kernel
    # checks alignment per tile and falls back to 4-byte copies. A piece's four rows must
    # not straddle two x runs: no x2 unless x's extent is a multiple of 4.
    mv = int(os.environ.get("EINC_SKINNY_MVEC", 1)) if async_ok and a_item == 4 and not a_kfast and not tab_k else 0
    if mv and lay.x2 is not None and lay.x[0] % 4:
        lay = dataclasses.replace(lay, x2=None, rest=[lay.x2] + lay.rest)
    U0 = lay.x[0]
    U = U0 * (lay.x2[0] if lay.x2 else 1)  # flat X
    V = lay.y[0] if lay.y else 1
    R = int(np.prod([e for e, _ in lay.rest], dtype=np.int64))  # rest indices (tables: skinny_meta)
    tiles_x = _cdiv(U, 32 * TY if one_axis else 32)
    tiles_y = 1 if one_axis else _cdiv(V, TY)
    tiles = R * tiles_x * tiles_y
    assert tiles < 2 ** 31, "the kernel decodes tiles in 32 bits"  # (> 2^40 rows)
    # B chunk: the whole K when it fits in KC_MAX k, so a block loads B once (per batch index)
    kc_max = max(BK, (KC_BYTES // (NP * acc)) // BK * BK)
    KC = min(kc_max, max(BK, _cdiv(K, BK) * BK))
    stage = 8 * TY * 33 * acc if lay.stage_c else 8 * 32 * (NP + 1) * acc if lay.stage_n else 0
    # the fp64 fragments: 2 RM x NP / 8 fragments of four fp64 sums per lane (96 registers at
    # NP = 24) leave room for one block per SM
    # The M-fast ring takes them only where its tiles are few (at most MFAST_DMMA_WAVES x the SM count:
    # one block per SM then runs the last wave as halves for a smaller share of the time than
    # two blocks do): session 11g, same run, akb (288 tiles) 0.111-0.115 ms against the FFMA
    # rows' 0.126, but akbc / abkc (1512 tiles) 0.163 / 0.153-0.156 against 0.159 / 0.139 and the
    # folded 48-wide cases 0.367-0.407 against 0.299-0.346. EINC_SKINNY_DMMA_MFAST=1 / =0: always / never.
    mfast = os.environ.get("EINC_SKINNY_DMMA_MFAST")
    mv_dm = mv and not one_axis and (mfast == "1" or (mfast is None and tiles <= MFAST_DMMA_WAVES * sm_count()))
    dm = kfast_dm or (dm_ok and mv_dm)
    minb = (1 if acc > 4 or rm >= 4 or (dm and rm > 1) else int(os.environ.get("EINC_SKINNY_DM_MINB", 2)) if dm
            else 3 if rm == 1 and os.environ.get("EINC_SKINNY_MINB") == "3" else 2)

    def smem_for(stages):
        rows = BM_ROWS * ((BK if dm else BK + 4) if a_kfast else BK) + (8 * BK if dm and not a_kfast else 0)
        a_ring = stages * rows * a_item if async_ok else 0
        return KC * NP * acc + max(a_ring, stage)

    # ring stages: S, or S - 1 where S would leave room for fewer than minb blocks per SM
    # (K-fast A with all of a long K's B resident: abk 135 KB -> 111 KB); EINC_SKINNY_S: experiments
    st = S if minb * (smem_for(S) + 1024) <= SMEM_PER_SM or not async_ok else S - 1
    st = int(os.environ.get("EINC_SKINNY_S", st))
    smem = smem_for(st)

    # Resident blocks: the fp32/int32 async kernels run two per SM (the 128-register cap,
    # and smem for two); a last wave of at most half of them runs its tiles as halves
    # (RM / 2 rows per thread), so it takes half as long. The grid is then exactly the
    # resident blocks, which makes that wave the last one of every block.
    per_sm = min(minb, SMEM_PER_SM // (smem + 1024))
    slots = sm_count() * per_sm
    last = tiles % slots
    split = (async_ok and acc == 4 and per_sm == (1 if dm else 2) and 0 < 2 * last <= slots
             and os.environ.get("EINC_SKINNY_TAIL") != "0")
    # ... or, with EINC_SKINNY_KSPLIT=1, as K ranges spread over every resident block, when
    # B's chunk holds all of K and A goes through a shared ring (M-fast 16-byte pieces or
    # K-fast); the ranges' partial tiles meet in a zeroed scratch (einc_skinny_combine).
    # Off by default: on the H200 it measured no faster than halves on akb / abk (0.134-0.149
    # against 0.124-0.131 ms, 3-11 ranges) and slower on the 48-wide cases (2 ranges of 36 k).
    # (ncu on akb with halves had the SMs active 76% of the kernel's time; the ranges raised
    # that, but each one pays its ring fill, B's rows, the partials' round trip and the sum.)
    nk = _cdiv(K, BK)
    kparts = min(slots // last, nk // KSPLIT_MIN_SLICES) if split and K <= KC and (mv or a_kfast) else 0
    kparts = min(kparts, int(os.environ.get("EINC_SKINNY_KPARTS", kparts)))  # (experiments: fewer ranges)
    ksplit = kparts >= 2 and os.environ.get("EINC_SKINNY_KSPLIT") == "1"
    split = split and (ksplit or rm % 2 == 0)
    whole = tiles - last if split else tiles
    per_tile = kparts if ksplit else 2
    items = whole + (tiles - whole) * per_tile
    assert items < 2 ** 31, "the kernel decodes items in 32 bits"
    tables, words = skinny_meta(lay, KC, whole, tiles_x, tiles_y, kparts if ksplit else 0)
    split_tiles = tiles - whole if ksplit else 0
    scratch_zero = (split_tiles * 4 + 255) // 256 * 256  # einc_skinny_counts_bytes
    scratch = scratch_zero + split_tiles * kparts * rm * NP * 256 * acc if ksplit else 0
    nt = len(tables)

    flags = (async_ok, one_axis, lay.stage_c, tab_k, lay.b_kfast, a_kfast, lay.stage_n)
    # k unrolled in the M-fast multiply: 8 (the whole slice) measured 5-7% faster than 2 on the
    # H200 once the epilogue freed registers (119, no spills); EINC_SKINNY_KU for experiments
    ku = int(os.environ.get("EINC_SKINNY_KU", 8))
    key = (VERSION, "skinny", NP, rm, BK, st, ku, mv, dm, minb, flags, ksplit, lay.ta, dtypes[0].name, compute.name,
           tuple(d.name for d in dtypes[1:]))
    name = _name("skinny", key, dtypes)
    b = lambda v: "true" if v else "false"
    targs = ", ".join([f"EincSkinnyTile<{NP}, {rm}, {BK}, {st}, {ku}, {mv}, {int(dm)}>", *map(b, flags), tout, tcn, tan, sa, sb]
                      + (["true"] if ksplit else []))
    a_arg, b_arg = ("in0", "in1") if lay.ta == 1 else ("in1", "in0")
    spec = (f"extern \"C\" __global__ void __launch_bounds__(256, {minb})\n"
            f"{name}(void* out, const void* in0, const void* in1, {'void* scratch, ' if ksplit else ''}"
            f"const EincSkinnyMeta meta) {{\n"
            f"  einc_skinny<{targs}>(out, {a_arg}, {b_arg}, meta{', scratch' if ksplit else ''});\n}}\n")
    family = (f"skinny: every block owns {'%d consecutive X' % (32 * TY) if one_axis else '32 X x %d Y' % TY} "
              f"rows of one rest index and all {N} columns (padded to {NP}), {rm} row(s) per thread; "
              + ("products on the fp64 tensor cores (mma m16n8k8, fp32 products exact in fp64), "
                 f"{2 * rm} fragments of 16 rows per warp; " if dm else "")
              + (f"{st}-stage shared ring of 16-byte K-fast pieces for A" if a_kfast
                 else f"{st}-stage shared ring of 16-byte M-fast pieces for A (four 4-byte copies each"
                      " where unaligned)" if mv
                 else f"{st}-stage thread-private cp.async ring for A" if async_ok
                 else "A prefetched a slice ahead in registers")
              + "; B in shared-memory chunks (all of K when it fits, loaded once per block); "
              + ("C staged through shared memory and stored along Y" if lay.stage_c
                 else "C staged per warp and stored row by row (N-fast)" if lay.stage_n else "C stored per row")
              + ("; operands swapped (the small group is the step's M)" if lay.ta == 2 else ""))
    modes_line = skinny_modes_line(lay)
    launch = [f"launch:   1-D grid-stride over {tiles} tiles"
              + (f" ({tiles - whole} of them, the last wave of {slots} resident blocks, as {kparts} K ranges each, "
                 f"summed in order through a {scratch}-byte scratch)" if ksplit else
                 f" ({tiles - whole} of them as two halves: the last wave of {slots} resident blocks)" if split else "")
              + f", 256 threads; {smem} bytes of dynamic shared memory",
              f"metadata: EincSkinnyMeta, {8 * len(words)} bytes; {nt} offset table(s)"]
    header = _header(step, family, dtypes, compute, modes_line, launch, "double" if dm else "")
    source = _assemble(header, ["common.cuh", "gett.cuh", "skinny.cuh"], spec)
    grid = max(1, min(items, slots if split else 2 * sm_count() * 8))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (256, 1, 1), smem, tuple(tables), 8 * len(words),
                          tuple(words), scratch=scratch, scratch_zero=scratch_zero)
