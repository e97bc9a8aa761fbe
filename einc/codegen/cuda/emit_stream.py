"""Short-K gett steps whose output is the traffic: the `stream` kernel (kernels/stream.cuh,
fp32 on FFMA; kernels/stream_mma.cuh, fp16/bf16 on mma.sync).

A gett step with a short K (fp32: K <= ``K_MAX``; 16-bit: K <= ``K_MAX_MMA``) whose output
has at least ``emit.C_LEAD_RATIO`` times as many elements as its operands (TCCG ccsd_t:
K = 24, C 92 M elements, A and B 0.5 M) does a few multiply-adds per stored element. The
stream kernel holds all of K in one slice, keeps two blocks resident per SM, walks a
contiguous range of tiles per block with the next tile's operands in flight and reloads
an operand's panel only when it changes, so the stores and multiply-adds run back to back
instead of waiting on every tile's loads.

>>> import einc.api
>>> p = einc.api.plan_for("amji,cbkm->kjicba", [(24, 24, 20, 24), (20, 20, 20, 24)], "float32", backend="cuda")
>>> k = emit_step(p, p.steps[0])
>>> k.name.startswith("einc_stream_"), k.block, k.grid
(True, (256, 1, 1), (264, 1, 1))
"""
from __future__ import annotations

import os

import numpy as np

from ...errors import EincError
from ...ir import Step
from .emit import (C_LEAD_RATIO, sm_count, tma_arch, VERSION, CudaStepKernel, _assemble, _cdiv, _gett_applies,
                   _has_unit, _header, _name, _types, emit_step, gett_layout)
from .emit_skinny import SMEM_PER_SM

TILE = "stream"
K_MAX_MMA = 64  # 16-bit: 128 bytes of k, 4 mma k-steps
K_MAX = 32  # all of K in one slice: 2 stages x KP x 264 x 4 bytes = 66 KB at KP = 32, + 12 KB of offsets
BM = BN = 128
RM = RN = 8
NT = (BM // RM) * (BN // RN)
BLOCKS_PER_SM = 2  # 128 registers, 2 x 62.9 KB (KP = 24, both groups tabled)
MIN_WAVES = 4  # tiles per resident block below which gett's one-tile blocks are as good


def k_max_mma() -> int:
    """K_MAX_MMA, or EINC_STREAM_MMA_KMAX (an experiment switch: a longer K takes one block per SM)."""
    return int(os.environ.get("EINC_STREAM_MMA_KMAX", K_MAX_MMA))


def _k(step: Step) -> int:
    return int(np.prod([m.extent for m in step.modes if m.kind == "k"], dtype=np.int64))


def _mma(step: Step, dtypes, compute):
    """The mma.sync instruction for a 16-bit step (fp16/bf16 in and out, fp32 compute), or None."""
    from .emit_mma import mma_op
    dtypes = [np.dtype(d) for d in dtypes]
    if dtypes[1].name not in ("float16", "bfloat16") or dtypes[0] != dtypes[1]:
        return None
    return mma_op(step, dtypes, np.dtype(compute))


def stream_applies(step: Step, dtypes, compute) -> bool:
    """Whether the stream kernel can run ``step``: a two-operand gett step with fp32 inputs
    and compute, 1 <= K <= K_MAX (cp.async copies raw bits; int32, the other 4-byte type,
    spilled 1.7 KB on a both-operands row-fast layout and is left to gett), or fp16/bf16
    inputs and output with fp32 compute (mma.sync), 1 <= K <= K_MAX_MMA; a batch group of at
    most one mode (after merging)."""
    compute = np.dtype(compute)
    size = lambda g: int(np.prod([m.extent for m in step.modes if m.kind == g], dtype=np.int64))
    tiles = size("batch") * _cdiv(size("m"), BM) * _cdiv(size("n"), BN)
    if not _gett_applies(step, dtypes, compute) or tiles >= 2 ** 31:  # the kernel counts tiles in 32 bits
        return False
    if len(gett_layout(step, BM, BN, metadata=False).G["b"]) > 1:
        return False  # a tabled batch: its per-tile lookups spilled the fp32 kernel (20 bytes at 128 registers)
    if _mma(step, dtypes, compute) is not None:
        return 1 <= _k(step) <= k_max_mma()
    return (compute.name == "float32" and all(np.dtype(d) == compute for d in dtypes[1:])
            and 1 <= _k(step) <= K_MAX)


def stream_shape(step: Step) -> bool:
    """Whether the step has the stream kernel's shape: the output dominates the traffic (the
    gett groups' C-ordered rule) and there are at least MIN_WAVES tiles per resident block
    (cost.stream_pays adds the dtype rule and the EINC_STREAM switch)."""
    size = lambda *gs: int(np.prod([m.extent for m in step.modes if m.kind in gs], dtype=np.int64))
    c, ab = size("batch", "m", "n"), size("batch", "m", "k") + size("batch", "k", "n")
    tiles = size("batch") * _cdiv(size("m"), BM) * _cdiv(size("n"), BN)
    return c >= C_LEAD_RATIO * ab and tiles >= MIN_WAVES * BLOCKS_PER_SM * sm_count()


def _rows_fast(modes, k_modes, t) -> bool:
    """Whether tensor t's tile loads run along its rows (M of A, N of B) rather than along K:
    the rows' innermost mode is unit-stride, or K's innermost is not and the rows hold t's
    unit stride somewhere."""
    if modes and abs(modes[-1][1][t]) == 1:
        return True
    if k_modes and abs(k_modes[-1][1][t]) == 1:
        return False
    return _has_unit(modes, t)


def _sectors(modes, k_modes, t, rows: int, kp: int, e: int = 4) -> int:
    """32-byte sectors one tile's panel of tensor t (rows x kp elements of e bytes) reads:
    runs along its rows or its K where the innermost mode is unit-stride, else one sector
    per element."""
    if modes and abs(modes[-1][1][t]) == 1:
        return kp * _cdiv(rows * e, 32)
    if k_modes and abs(k_modes[-1][1][t]) == 1:
        return rows * _cdiv(kp * e, 32)
    return rows * kp


def _along_m(lay, kp: int, e: int) -> bool:
    """Walk tiles along M (B's panel resident) when B's panel costs more sectors than A's,
    else along N, C's unit-stride side, so that a block's consecutive tiles write adjacent
    runs of the same rows (bf16 ccsd_t, both panels K-major after the plan's copy: along N
    0.111-0.124 ms against 0.113-0.156 along M). ``EINC_STREAM_ALONG`` = m or n overrides
    (A/B measurements and tests)."""
    along = os.environ.get("EINC_STREAM_ALONG", "auto")
    if along not in ("auto", "m", "n"):
        raise EincError(f"EINC_STREAM_ALONG={along!r}: expected auto, m or n")
    if along != "auto":
        return along == "m"
    G = lay.G
    return _sectors(G["n"], G["k"], lay.tb, BN, kp, e) > _sectors(G["m"], G["k"], lay.ta, BM, kp, e)


def _variant(kp: int) -> tuple:
    """(lane order, k-loop chunk) of the fp32 kernel: EINC_STREAM_LANES (gett's orders,
    rows by default) and EINC_STREAM_KU (8 by default, or "all": the whole K unrolled),
    A/B switches for measurements."""
    from .emit import GETT_LANES
    lanes = os.environ.get("EINC_STREAM_LANES", "rows")
    if lanes not in GETT_LANES:
        raise EincError(f"EINC_STREAM_LANES={lanes!r}: expected one of {', '.join(GETT_LANES)}")
    ku = os.environ.get("EINC_STREAM_KU", "8")
    if ku not in ("8", "all"):
        raise EincError(f"EINC_STREAM_KU={ku!r}: expected 8 or all")
    return GETT_LANES[lanes], kp if ku == "all" else 8


def emit_stream(step: Step, dtypes, compute, arch: str = "sm_90") -> CudaStepKernel:
    if _mma(step, dtypes, compute) is not None:
        return emit_stream_mma(step, dtypes, compute, arch=arch)
    K = _k(step)
    KP = _cdiv(K, 8) * 8
    lay = gett_layout(step, BM, BN)
    G, tabled = lay.G, lay.tabled
    a_fast = _rows_fast(G["m"], G["k"], lay.ta)
    b_fast = _rows_fast(G["n"], G["k"], lay.tb)
    along_m = _along_m(lay, KP, 4)  # the operand whose panel costs more sectors stays resident
    tout, tcn, tan, tin = _types(dtypes, compute)
    flags = (tabled["b"], tabled["m"], tabled["n"], tabled["k"], a_fast, b_fast, along_m)
    lanes, ku = _variant(KP)
    key = (VERSION, TILE, KP, flags, lay.swapped, dtypes[0].name, compute.name, tuple(d.name for d in dtypes[1:]),
           lanes, ku)
    name = _name(TILE, key, dtypes)
    b = lambda x: "true" if x else "false"
    cfg = f"EincStreamTile<{BM}, {BN}, {KP}, {RM}, {RN}>"
    targs = ", ".join([cfg, *map(b, flags), tout, tcn, tan, str(lanes), str(ku)])
    a_arg, b_arg = ("in1", "in0") if lay.swapped else ("in0", "in1")
    spec = (f"extern \"C\" __global__ void __launch_bounds__({NT}, {BLOCKS_PER_SM})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincGettMeta meta) {{\n"
            f"  einc_stream<{targs}>(out, {a_arg}, {b_arg}, meta);\n}}\n")
    offsets = 8 * 3 * (4 + 2 * (BM * tabled["m"] + BN * tabled["n"]))  # stream.cuh: einc_stream_smem
    smem = offsets + 2 * KP * (BM + BN + 8) * 4
    tiles_m, tiles_n = lay.tiles(BM, BN)
    tiles = lay.ext["b"] * tiles_m * tiles_n
    grid = max(1, min(tiles, BLOCKS_PER_SM * sm_count()))
    family = (f"stream {BM}x{BN} tiles, all K (padded to {KP}) in one slice, {RM}x{RN} per thread, {NT} threads, "
              f"{BLOCKS_PER_SM} resident blocks per SM, each walking a range of tiles along "
              f"{'M (B resident)' if along_m else 'N (A resident)'} with the next tile's loads in flight; "
              f"groups batch={lay.gdesc('b')} M={lay.gdesc('m')} N={lay.gdesc('n')} K={lay.gdesc('k')}; "
              f"A loads {'M' if a_fast else 'K'}-fast, B loads {'N' if b_fast else 'K'}-fast"
              + ("; operands swapped (C^T = B^T A^T: C is unit-stride along M)" if lay.swapped else ""))
    launch = [f"launch:   1-D grid of {grid} blocks of {NT} threads walking {tiles} {BM}x{BN} tiles "
              f"(contiguous ranges); {smem} bytes of dynamic shared memory "
              f"({offsets} of them three tiles' headers and tabled rows' offsets)",
              f"metadata: EincGettMeta, {8 * len(lay.words)} bytes; {len(lay.tables)} offset table(s)"]
    header = _header(step, family, dtypes, compute, lay.modes_line(step), launch)
    source = _assemble(header, ["common.cuh", "gett.cuh", "stream.cuh"], spec)
    return CudaStepKernel(name, source, key, (grid, 1, 1), (NT, 1, 1), smem, lay.tables, 8 * len(lay.words),
                          lay.words)


# tensor-core variant: 128x128 tiles, 2 x 4 warps of 64 x 32 (a 128x64 tile of 32 x 32 warps
# at three blocks per SM measured slower: benchmarks/NOTES.md, session 8)
WM, WN = 2, 4


# C stored by boxes (cbox.py) where the layout allows, on sm_90 (cp.async.bulk.tensor);
# EINC_STREAM_BOX=0 keeps the threads' 16-byte stores (A/B measurements)
BOX_STORE = os.environ.get("EINC_STREAM_BOX", "1") != "0"
_C_TABLE_WORDS = {"b": 21, "m": 22, "n": 23}  # EincGettMeta's tc_b, tc_m, tc_n (emit.gett_layout)


def _box_tables(lay, cb):
    """The layout's metadata words and tables with C's three table pointers carrying the
    box tiling instead (stream_mma.cuh reads tc_b as the staging offsets, tc_m / tc_n as
    the tiles' map coordinates; C's own offset tables are not needed)."""
    words, tables = list(lay.words), list(lay.tables)
    for g, tab in (("b", cb.offsets), ("m", cb.coords_m), ("n", cb.coords_n)):
        w = words[_C_TABLE_WORDS[g]]
        if isinstance(w, tuple):
            tables[w[1]] = np.ascontiguousarray(tab)
        else:
            words[_C_TABLE_WORDS[g]] = ("table", len(tables))
            tables.append(np.ascontiguousarray(tab))
    return tuple(words), tuple(tables)


def c_box_tiling(step: Step, out_itemsize: int, arch: str = "sm_90"):
    """cbox.CBoxes for the tensor-core stream kernel's C, or None: on sm_90 and where C's
    rows are tabled (the threads' store looks each row's offset up): ccsd_t amji / bmji /
    bmki 81-87 -> 62-65 us (ncu, session 22c); with a strided M (cmji, jic one mode of C)
    the threads' 16-byte runs are cheap: 67 against 73 us with boxes (22d)."""
    from .cbox import c_boxes
    plain = gett_layout(step, BM, BN, metadata=False)
    if not BOX_STORE or not tma_arch(arch) or not plain.tabled["m"]:
        return None
    return c_boxes(plain, out_itemsize, BM, BN)


def emit_stream_mma(step: Step, dtypes, compute, vec: bool = True, arch: str = "sm_90",
                    box: bool = True) -> CudaStepKernel:
    """The fp16/bf16 variant (kernels/stream_mma.cuh); when it loads 16-byte pieces,
    ``fallback`` is its element-path twin for operands that arrive misaligned. On sm_90 C is
    stored by TMA boxes where cbox.c_boxes takes the layout (then ``fallback`` is the
    threads' store, for a C not 16-byte aligned)."""
    from .emit_mma import _OPS, _vec_ok
    dtypes = [np.dtype(d) for d in dtypes]
    struct, E, what = _OPS[_mma(step, dtypes, compute)]
    K = _k(step)
    KB = _cdiv(K * E, 32) * 32
    cb = c_box_tiling(step, dtypes[0].itemsize, arch) if box else None
    tile_m, tile_n = (cb.tile_m, cb.tile_n) if cb else (BM, BN)
    lay = gett_layout(step, tile_m, tile_n)
    words, tables = _box_tables(lay, cb) if cb else (lay.words, lay.tables)
    G, ta, tb, tabled = lay.G, lay.ta, lay.tb, lay.tabled
    a_kmaj, b_kmaj = not _has_unit(G["m"], ta), not _has_unit(G["n"], tb)
    vec_a = vec and _vec_ok(G, "k" if a_kmaj else "m", ta, 16 // E)
    vec_b = vec and _vec_ok(G, "k" if b_kmaj else "n", tb, 16 // E)
    along_m = _along_m(lay, KB // E, E)
    side = lambda r, kmaj: r * (KB + 16) if kmaj else (KB // E) * (r * E + 16)  # mma.cuh EincMmaSmem
    ring = _cdiv(8 * 3 * (4 + 2 * (BM * tabled["m"] + BN * tabled["n"]) + (8 if cb else 0)), 128) * 128
    row = (BN // WN) * dtypes[0].itemsize
    staging = WM * WN * (BM // WM) * (row if row == 64 and dtypes[0].itemsize == 2 else row + 16)  # per warp: WPITCH
    if cb:
        staging = 2 * _cdiv(tile_m * tile_n * dtypes[0].itemsize, 128) * 128  # two staged boxes
    smem = ring + 2 * (side(BM, a_kmaj) + side(BN, b_kmaj)) + staging
    minb = BLOCKS_PER_SM if BLOCKS_PER_SM * (smem + 1024) <= SMEM_PER_SM else 1  # K past K_MAX_MMA: one
    tout, tcn, tan, _ = _types(dtypes, compute)
    b = lambda x: "true" if x else "false"
    flags = (tabled["b"], tabled["m"], tabled["n"], tabled["k"], a_kmaj, b_kmaj, vec_a, vec_b, along_m)
    boxing = (tile_m, tile_n, cb.rank, cb.batch_dim) if cb else None
    key = (VERSION, "stream_mma", KB, struct, flags, lay.swapped, dtypes[0].name, compute.name,
           tuple(d.name for d in dtypes[1:]), boxing)
    name = _name("stream_mma", key, dtypes)
    nt = WM * WN * 32
    tcfg = f"EincStreamMmaTile<{BM}, {BN}, {WM}, {WN}, {KB}" + (f", {', '.join(map(str, boxing))}>" if cb else ">")
    targs = ", ".join([tcfg, struct, *map(b, flags), tout, tcn, tan])
    a_arg, b_arg = ("in1", "in0") if lay.swapped else ("in0", "in1")
    cm_param, cm_arg = (", const __grid_constant__ EincTmap cm", ", &cm") if cb else ("", "")
    spec = (f"extern \"C\" __global__ void __launch_bounds__({nt}, {minb})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincGettMeta meta{cm_param}) {{\n"
            f"  einc_stream_mma<{targs}>(out, {a_arg}, {b_arg}, meta{cm_arg});\n}}\n")
    tiles_m, tiles_n = lay.tiles(tile_m, tile_n)
    tiles = lay.ext["b"] * tiles_m * tiles_n
    grid = max(1, min(tiles, minb * sm_count()))
    load = lambda kmaj, v, mn: (f"{'K' if kmaj else mn}-major, {'16-byte cp.async' if v else 'element loads'}")
    store = (f"C's {tile_m}x{tile_n} tiles staged as boxes of C ({'x'.join(map(str, cb.tmap.box))} over a "
             f"rank-{cb.rank} map) and stored by TMA (cp.async.bulk.tensor, one thread)" if cb
             else "C staged per warp for 16-byte stores")
    family = (f"stream {BM}x{BN} tiles on tensor cores ({what}), all K ({KB} bytes) in one slice, "
              f"{WM}x{WN} warps of {BM // WM}x{BN // WN}, {minb} resident blocks per SM, each walking "
              f"a range of tiles along {'M (B resident)' if along_m else 'N (A resident)'} with the next tile's "
              f"loads in flight, {store}; groups batch={lay.gdesc('b')} M={lay.gdesc('m')} "
              f"N={lay.gdesc('n')} K={lay.gdesc('k')}; A {load(a_kmaj, vec_a, 'M')}; B {load(b_kmaj, vec_b, 'N')}"
              + ("; operands swapped (C^T = B^T A^T: C is unit-stride along M)" if lay.swapped else ""))
    launch = [f"launch:   1-D grid of {grid} blocks of {nt} threads walking {tiles} {tile_m}x{tile_n} tiles "
              f"(contiguous ranges); {smem} bytes of dynamic shared memory",
              f"metadata: EincGettMeta, {8 * len(words)} bytes; {len(tables)} offset table(s)"
              + ("; C's tile boxes in tc_b (staging offsets), tc_m / tc_n (map coordinates)" if cb else "")]
    if cb:
        launch.append(f"tensor map: cm (by value, after the metadata) = cuTensorMapEncodeTiled over C, dims "
                      f"{cb.tmap.dims}, byte strides {cb.tmap.strides}, box {cb.tmap.box}, no swizzle")
    header = _header(step, family, dtypes, compute, lay.modes_line(step), launch)
    source = _assemble(header, ["common.cuh", "gett.cuh", "mma.cuh", "stream.cuh", "stream_mma.cuh"], spec)
    aligned = tuple(t for t, v in ((ta, vec_a), (tb, vec_b)) if v)
    if cb:  # TMA needs C 16-byte aligned; the twin stores by threads (and has its own twin)
        fallback = emit_stream_mma(step, dtypes, compute, vec=vec, arch=arch, box=False)
        aligned = (0,) + aligned
    else:
        fallback = emit_stream_mma(step, dtypes, compute, vec=False, arch=arch, box=False) if aligned else None
    return CudaStepKernel(name, source, key, (grid, 1, 1), (nt, 1, 1), smem, tables, 8 * len(words),
                          words, aligned, fallback, tmaps=(cb.tmap,) if cb else ())
