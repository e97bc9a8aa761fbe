"""fp16 / bf16 skinny steps on tensor cores: the `skinny_mma` kernel (kernels/skinny_mma.cuh).

The skinny step (emit_skinny.py: a small N or M group of at most 32 elements against a big
one) with 16-bit float inputs and fp32 compute. skinny.cuh's converting register path runs
these at 6-9 TFLOP/s (an FFMA per multiply-add after a conversion per element); here A's
tile goes raw into a shared ring (16-byte cp.async where its unit stride allows), B sits
in shared memory in fragment order, and mma.sync.m16n8k16 does the arithmetic, so the
kernel is left with streaming A.

Experiment switches (each measured on the H200, benchmarks/NOTES.md, session 7): EINC_SKINNY_MMA_MI (m16
tiles a warp, 1 or 2), _BX (the box's X extent), _BK (32 or 64 k a slice), _S (ring stages),
_EU (read-out unrolled), _NT (512 threads a block); _TMA=0 (sm_90's TMA box a slice, the default
since session 33, replaced by the threads' cp.async pieces).

>>> import einc.api
>>> from einc.codegen.cuda.emit import emit_step
>>> p = einc.api.plan_for("akb,jk->jba", [(384, 64, 384), (24, 64)], "bfloat16", backend="cuda")
>>> k = emit_step(p, p.steps[0], gett_tile="skinny")
>>> k.name.startswith("einc_skinny_mma_"), k.block, k.fallback.name.startswith("einc_skinny_mma_")
(True, (256, 1, 1), True)
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from ...ir import Step
from .emit import VERSION, sm_count, tma_arch, CudaStepKernel, Tmap, _assemble, _cdiv, _group_offsets, _header, _name, _types

BK = 32  # k per ring slice (two m16n8k16 k-steps); 64 also built (EINC_SKINNY_MMA_BK)
NT = 256
BX = 0  # 0: the rule below picks the box's X extent (EINC_SKINNY_MMA_BX overrides; A/B runs set this)
B_BYTES = 32 * 1024  # shared memory for one chunk of B (TCCG intensli: all of K = 384 x 24)
SMEM_PER_SM = 233472  # H100/H200: 228 KB per SM, 1 KB of it reserved per block
MAX_STAGES = 8
# sm_90: A's slices by the TMA unit where a tensor map describes them (_tma_dims); on by
# default since session 33 (H100, interleaved A/B against the threads' cp.async pieces: 7% less
# time geomean over five intensli cases, 13% on the 5-mode ones; benchmarks/NOTES.md).
# EINC_SKINNY_MMA_TMA=0 (or this attribute, for A/B runs) keeps the cp.async ring
TMA = os.environ.get("EINC_SKINNY_MMA_TMA", "1") != "0"
_OPS = {"float16": ("EincMmaF16", "f16"), "bfloat16": ("EincMmaBF16", "bf16")}


def _min_work() -> int:
    from .emit_mma import MIN_WORK
    return MIN_WORK


MMA_MIN_WORK = None  # None: emit_mma.MIN_WORK (multiply-adds; below it the converting path's setup is as good)


def skinny_mma_applies(step: Step, dtypes, compute) -> bool:
    """Whether the skinny step runs on tensor cores: fp16 x fp16 or bf16 x bf16 with fp32
    compute, and at least MIN_WORK multiply-adds (K counted as at least 1), as for the mma
    gett kernels: smaller steps keep the converting path (and the CPU emulator, which has
    no mma, runs those). ``EINC_SKINNY_MMA=0`` turns it off."""
    if os.environ.get("EINC_SKINNY_MMA") == "0":
        return False
    if len(dtypes) != 3 or dtypes[1] != dtypes[2] or dtypes[1].name not in _OPS or np.dtype(compute) != np.float32:
        return False
    work = 1
    for m in step.modes:
        work *= max(m.extent, 1) if m.kind == "k" else m.extent
    return work >= (_min_work() if MMA_MIN_WORK is None else MMA_MIN_WORK)


def _aligned(values) -> bool:
    return all(int(v) % 8 == 0 for v in values)


def _smem(np_, kc, bm, bx, s, kfast, order, out_item, bk=BK, tma=False):
    by = bm // bx
    pitch = bk * 2 + 16 if kfast else bm * 2 + 16
    stage = (bm if kfast else bk) * pitch
    if tma:  # dense swizzled boxes; the ring at the first 1024-byte boundary after B's chunk,
        # up to 1023 bytes past it (the dynamic base's own alignment is not known here)
        return _smem(np_, kc, bm, bx, 0, kfast, order, out_item, bk) + 1024 + s * bm * bk * 2
    if order == 1:
        v = bx * (by + 1)
        sn = v + ((4 - v % 16) + 16) % 16
        elems = np_ * sn
    elif order == 2:
        elems = bm * (np_ + 2)
    else:
        elems = np_ * (bm + 8)
    return np_ * (2 * kc + 16) + s * stage + _cdiv(elems * out_item, 16) * 16


def _tma_dims(lay, kfast, bx, by, bk, K):
    """The tensor map that gives a slice of A as one box, as (extent, element stride, box)
    per dimension in the map's order (M-fast: x [x2] k [y] [rest]; K-fast: k x [x2] [y]
    [rest]), and the kernel's TM bits; None where no map does: tabled K, more than one rest
    mode, an M-fast box row that is not 16-128 bytes (one axis: BX = BM), a box that would
    straddle two x2 (u0 not a multiple of BX), an x2 nearer in memory than k (the box's one x2
    index leaves the rows beside each of its rows to other tiles: akdbc 0.299 ms by TMA against
    0.253 by cp.async, where cabkd, k nearer than x2, gains 13%; NOTES, session 33), a stride
    that is not positive, or an extent past int32 (the copy's coordinates)."""
    if len(lay.k) != 1 or len(lay.rest) > 1 or 2 * (bk if kfast else bx) not in (16, 32, 64, 128):
        return None
    if lay.x2 is not None and (lay.x[0] % bx or lay.x2[1][1] < lay.k[0][1][1]):
        return None
    xs = [(lay.x[0], lay.x[1][1], bx)] + ([(lay.x2[0], lay.x2[1][1], 1)] if lay.x2 else [])
    kd = [(K, lay.k[0][1][1], bk)]
    tail = ([(lay.y[0], lay.y[1][1], by)] if lay.y else []) + [(e, st[1], 1) for e, st in lay.rest]
    dims = (kd + xs if kfast else xs + kd) + tail
    if dims[0][1] != 1 or any(st <= 0 for _, st, _ in dims[1:]) or any(e >= 2 ** 31 for e, _, _ in dims):
        return None
    bits = 1 | 2 * (lay.x2 is not None) | 4 * (lay.y is not None) | 8 * bool(lay.rest)
    return dims, bits


def emit_skinny_mma(step: Step, dtypes, compute, vec: bool = True, mi: int | None = None,
                    arch: str = "sm_90") -> CudaStepKernel:
    """The tensor-core skinny kernel for ``step`` (skinny_mma_applies() first); when it
    copies A in 16-byte pieces, ``fallback`` is its element-path twin for an A that
    arrives misaligned (``vec=False`` builds that twin)."""
    from .emit_skinny import skinny_layout, skinny_meta, skinny_modes_line
    lay = skinny_layout(step, min_rows=1)
    assert lay is not None
    N = int(np.prod([e for e, _ in lay.n], dtype=np.int64)) if lay.n else 1
    NP = max(8, _cdiv(N, 8) * 8)
    K = int(np.prod([e for e, _ in lay.k], dtype=np.int64)) if lay.k else 1
    tab_k = len(lay.k) > 1
    one_axis = lay.y is None
    mfast = lay.x[1][1] == 1
    kfast = not mfast and any(st[1] == 1 for _, st in lay.k)
    # a 16-byte piece is 8 consecutive flat x: with an x2, x's extent must be a multiple of 8
    if mfast and lay.x2 is not None and lay.x[0] % 8:
        lay = dataclasses.replace(lay, x2=None, rest=[lay.x2] + lay.rest)
    order = 1 if lay.stage_c else 2 if lay.stage_n else 0
    U0 = lay.x[0]
    U = U0 * (lay.x2[0] if lay.x2 else 1)
    V = lay.y[0] if lay.y else 1
    R = int(np.prod([e for e, _ in lay.rest], dtype=np.int64))
    ys = lay.y[1] if lay.y else (0, 0, 0)
    x2s = lay.x2[1] if lay.x2 else (0, 0, 0)
    k1 = lay.k[0][1] if len(lay.k) == 1 else (0, 0, 0)
    # 16-byte pieces: every offset a piece starts at is a multiple of 8 elements (the
    # pointer's alignment is checked at launch: `aligned`, else the element twin)
    rest_a = _group_offsets(lay.rest, 1)
    if mfast:
        koffs = _group_offsets(lay.k, 1) if tab_k else [k1[1]]
        vec = vec and _aligned([ys[1], x2s[1], *koffs]) and _aligned(rest_a)
    elif kfast and not tab_k:
        vec = vec and _aligned([lay.x[1][1], ys[1], x2s[1]]) and _aligned(rest_a)
    else:
        vec = False
    out_item = dtypes[0].itemsize
    bk = int(os.environ.get("EINC_SKINNY_MMA_BK", BK))
    kc_max = max(bk, ((B_BYTES // NP - 16) // 2) // bk * bk)
    KC = min(kc_max, max(bk, _cdiv(K, bk) * bk))

    nt = int(os.environ.get("EINC_SKINNY_MMA_NT", NT))

    def config(mi):
        bm = mi * nt // 2
        bx = bm if one_axis else (16 if mi == 2 else 8) if order == 1 else 32
        # C unit-stride along Y (order 1) is stored in runs of BY: where C is small beside A
        # (N <= K / 8: intensli akb, N 24, K 384), A's runs of BX take the longer share
        if order == 1 and not one_axis and mfast and 8 * N <= K and bm >= 4 * bx:
            bx *= 2
        bx = min(bm, int(os.environ.get("EINC_SKINNY_MMA_BX", BX)) or bx) if not one_axis else bx
        minb = 1 if nt == 512 else 2 if mi == 2 else 3
        s = next((s for s in range(MAX_STAGES, 2, -1)
                  if minb * (_smem(NP, KC, bm, bx, s, kfast, order, out_item, bk) + 1024) <= SMEM_PER_SM), 3)
        smem = _smem(NP, KC, bm, bx, s, kfast, order, out_item, bk)
        per_sm = max(1, min(minb, SMEM_PER_SM // (smem + 1024)))
        tiles = R * _cdiv(U, bx) * _cdiv(V, bm // bx)
        slots = sm_count() * per_sm
        return dict(mi=mi, bm=bm, bx=bx, by=bm // bx, minb=minb, s=s, smem=smem, tiles=tiles, slots=slots)

    # two m16 tiles a warp (2 blocks an SM) for M-fast A, one (3 blocks) for K-fast A: the
    # faster of the two on all eight TCCG intensli cases (benchmarks/NOTES.md, session 7, call 3); the
    # last wave's fill did not predict it (akb: 0.73 at MI = 2, 0.97 at 1, MI = 2 faster)
    c = config(mi or int(os.environ.get("EINC_SKINNY_MMA_MI", 0)) or (1 if kfast else 2))
    tm = (_tma_dims(lay, kfast, c["bx"], c["by"], bk, K)
          if TMA and vec and tma_arch(arch) else None)
    if tm is not None:  # the same stage count where the slack still fits (else one fewer)
        while c["s"] > 2 and c["minb"] * (_smem(NP, KC, c["bm"], c["bx"], c["s"], kfast, order, out_item, bk,
                                                True) + 1024) > SMEM_PER_SM:
            c["s"] -= 1
    c["s"] = int(os.environ.get("EINC_SKINNY_MMA_S", c["s"]))
    c["smem"] = _smem(NP, KC, c["bm"], c["bx"], c["s"], kfast, order, out_item, bk, tm is not None)
    tiles_x, tiles_y = _cdiv(U, c["bx"]), _cdiv(V, c["by"])
    tiles = R * tiles_x * tiles_y
    assert tiles < 2 ** 31 and K < 2 ** 31, "the kernel decodes tiles and counts k in 32 bits"

    tables, words = skinny_meta(lay, KC, tiles, tiles_x, tiles_y)  # every tile whole
    ntab = len(tables)

    tout, tcn, _, _ = _types(dtypes, compute)
    op, tag = _OPS[dtypes[1].name]
    flags = (kfast, vec, tab_k, lay.b_kfast)
    # the read-out unrolled over all NP columns: 3-19% on the intensli cases; at MI = 1 (80
    # registers) it spills a few bytes but in the K-fast 16-byte kernel
    eu = int(os.environ.get("EINC_SKINNY_MMA_EU", 1 if c["mi"] == 2 or (kfast and vec) else 0))
    tbits = tm[1] if tm else 0
    key = (VERSION, "skinny_mma", NP, c["mi"], c["bx"], c["s"], bk, eu, nt, c["minb"], flags, order, lay.ta,
           tbits, dtypes[0].name, compute.name, tuple(d.name for d in dtypes[1:]))
    name = _name("skinny_mma", key, dtypes)
    b = lambda v: "true" if v else "false"
    targs = ", ".join([f"EincSkinnyMmaTile<{c['mi']}, {NP}, {c['bx']}, {c['s']}, {bk}, {eu}, {nt}, {tbits}>", op,
                       *map(b, flags), str(order), tout, tcn])
    a_arg, b_arg = ("in0", "in1") if lay.ta == 1 else ("in1", "in0")
    tparam, targ = (", const __grid_constant__ EincTmap tm", ", &tm") if tm else ("", "")
    spec = (f"extern \"C\" __global__ void __launch_bounds__({nt}, {c['minb']})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincSkinnyMeta meta{tparam}) {{\n"
            f"  einc_skinny_mma<{targs}>(out, {a_arg}, {b_arg}, meta{targ});\n}}\n")
    box = f"{c['bm']} consecutive X" if one_axis else f"{c['bx']} X x {c['by']} Y"
    tmaps = ()
    if tm:
        dims = tm[0]
        row = 2 * dims[0][2]
        swz = "NONE" if row == 16 else f"{row}B"
        tmaps = (Tmap(lay.ta, "UINT16", tuple(e for e, _, _ in dims), tuple(2 * st for _, st, _ in dims[1:]),
                      tuple(bx for _, _, bx in dims), swz),)
        a_how = (f"TMA boxes {tmaps[0].box} of a {len(dims)}-d map over A (dims {tmaps[0].dims}, byte strides "
                 f"{tmaps[0].strides}, swizzle {swz}), one thread asking, an mbarrier per stage, "
                 + ("[m][k] read by ldmatrix" if kfast else "[k][m] read by ldmatrix.trans"))
    else:
        a_how = ((("16-byte cp.async pieces of 8 k, [m][k] read by ldmatrix" if kfast
                   else "16-byte cp.async pieces of 8 rows, [k][m] read by ldmatrix.trans") if vec
                 else "element loads through registers (no aligned 16-byte pieces), "
                      + ("[m][k] read by ldmatrix" if kfast else "[k][m] read by ldmatrix.trans")))
    family = (f"skinny_mma (tensor cores: mma.sync m16n8k16 {tag}, fp32 accumulate): every block owns {box} "
              f"rows of one rest index and all {N} columns (padded to {NP}), {c['mi']} m16 tile(s) a warp; "
              f"A raw in a {c['s']}-stage shared ring of {bk}-k slices fed across tiles, {a_how}; "
              f"B raw in shared memory as [n][k] "
              f"({'all of K, loaded once per block' if KC >= K else f'chunks of {KC} k'}); "
              f"C converted, staged through shared memory and stored along "
              + ("Y (its unit stride)" if order == 1 else "N (its unit stride)" if order == 2 else "X")
              + ("; operands swapped (the small group is the step's M)" if lay.ta == 2 else ""))
    modes_line = skinny_modes_line(lay)
    grid = max(1, min(tiles, c["slots"]))
    launch = [f"launch:   1-D grid-stride over {tiles} tiles on {grid} blocks ({c['slots']} resident), {nt} threads; "
              f"{c['smem']} bytes of dynamic shared memory",
              f"metadata: EincSkinnyMeta, {8 * len(words)} bytes; {ntab} offset table(s)"]
    header = _header(step, family, dtypes, compute, modes_line, launch)
    source = _assemble(header, ["common.cuh", "gett.cuh", "skinny.cuh", "mma.cuh", "copy_tma.cuh", "skinny_mma.cuh"], spec)
    aligned = (lay.ta,) if vec else ()
    fallback = emit_skinny_mma(step, dtypes, compute, vec=False, mi=c["mi"], arch=arch) if vec else None
    return CudaStepKernel(name, source, key, (grid, 1, 1), (nt, 1, 1), c["smem"], tuple(tables), 8 * len(words),
                          tuple(words), aligned, fallback, tmaps=tmaps)
