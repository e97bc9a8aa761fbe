"""Hopper tensor-core GEMM steps: the `wgmma` kernel (kernels/wgmma.cuh), sm_90a only.

Chosen over `mma` (emit_mma.py) when the device is sm_90, the instruction exists for the
dtypes (fp16, bf16, tf32 opt-in, int8/uint8) and both operands can be copied in 16-byte
pieces into the swizzled layouts wgmma reads: A K-major; B K-major, or N-major for
16-bit types (the instruction transposes it). The wgmma instruction itself is generated
here, because its operand list (one register per accumulator) depends on the tile width.
Tiles named ...ws are warp-specialised (one producer warpgroup fills the ring through
mbarriers, the others only compute; kernels/wgmma.cuh einc_wgmma_gett_ws).

>>> import einc.api
>>> from einc.codegen.cuda.emit import emit_step
>>> p = einc.api.plan_for("ik,jk->ij", [(1024, 512), (1024, 512)], "float16", backend="cuda")
>>> k = emit_step(p, p.steps[0], "sm_90")
>>> k.name.startswith("einc_wgmma_"), k.arch, "wgmma.mma_async" in k.source
(True, 'sm_90a', True)
"""
from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from ...ir import Plan, Step
from .emit import (C_N_WORD, sm_count, VERSION, CudaStepKernel, Tmap, _assemble, _cdiv, _has_unit, _header, _merge,
                   _name, _types, gett_layout)
from .emit_mma import _vec_ok, emit_mma

# op -> (PTX type suffix, accumulator C type, element bytes, k per instruction, transposable)
_PTX = {
    "float16": (".f32.f16.f16", "float", 2, 16, True),
    "bfloat16": (".f32.bf16.bf16", "float", 2, 16, True),
    "float32": (".f32.tf32.tf32", "float", 4, 8, False),
    "int8": (".s32.s8.s8", "int", 1, 32, False),
    "uint8": (".s32.u8.u8", "int", 1, 32, False),
}
# name -> (BM, BN, stages, warp-specialised: None, or the (producer, consumer) setmaxnreg
# targets, 0 = keep the launch allocation)
WGMMA_TILES = {
    "wgmma128x128": (128, 128, 5, None),
    "wgmma128x256": (128, 256, 4, None),
    "wgmma256x128": (256, 128, 4, None),  # four warpgroups of 64x128
    # one producer warpgroup (cp.async + mbarriers) beside four / two consumer warpgroups;
    # 640 threads leave 94 registers each, enough (no spills). 128x256ws: 384 threads at
    # 168; its consumers (128 accumulators) use ~151, so the setmaxnreg shift is headroom,
    # kept because that is the version measured
    "wgmma256x128ws": (256, 128, 4, (0, 0)),
    "wgmma128x256ws": (128, 256, 4, (56, 224)),
    # short K (one or two 128-byte slices): three stages are all the ring needs and leave
    # room (97 KB with the epilogue's staging tile) for two blocks per SM, so one block's
    # epilogue overlaps the other's loads
    "wgmma128x128s3": (128, 128, 3, None),
    # one consumer warpgroup computing both 64-row strips (128 accumulators) beside the
    # producer: 256 threads at 128 registers (setmaxnreg 56 / 200) and 97 KB, two blocks per
    # SM, so one block's epilogue overlaps the other's slices (short-K steps)
    "wgmma128x128ws1": (128, 128, 3, (56, 200)),
    # the same, persistent, with C staged (as its 16-bit type) apart from a two-stage ring:
    # the producer never waits for an epilogue, it fills the next tile's slices meanwhile
    "wgmma128x128ws1p": (128, 128, 2, (56, 200)),
    # 128x256ws with C staged apart (16-bit C: 212 KB with a three-stage ring), persistent at
    # one block per SM (a four-stage ws1p at one block per SM measured slower than ws1p
    # everywhere, session 14d: ap,srqp 0.116 against 0.095 ms)
    "wgmma128x256wsp": (128, 256, 3, (56, 224)),
    # three consumer warpgroups of 64x192 (96 accumulators; 512 threads at 128 registers,
    # setmaxnreg 40 / 152, no spills) beside the producer: 12.5% more products per staged byte
    # than 128x256, and whole waves where 128x256 leaves a partial one (bf16 ki,jk 7248: 1444
    # tiles, 10.9 waves of 11, against 1653 tiles, 12.5 of 13). TMA producer only: the cp.async
    # loaders' piece walk needs BN/8 to divide 128 threads
    "wgmma192x192ws": (192, 192, 4, (40, 152)),
    # the same, persistent with C staged apart (16-bit C: 218 KB with a three-stage ring), so
    # the producer fills the next tile's slices during the epilogue -- cuBLAS's bf16 kernel for
    # ki,jk 7248 is a persistent 192x192, three stages of 64 k (nvjet_sm90_tst_192x192_64x3)
    "wgmma192x192wsp": (192, 192, 3, (40, 152)),
    # the same with four stages: C staged one warpgroup's 64 rows at a time (24 KB, not 72), the
    # warpgroups taking turns (kernels/wgmma.cuh einc_wgmma_epilogue_tma_wg). Session 29 (H100,
    # ncu, bf16 ki,jk at K 7248 / 14496): the four-stage 192x192ws's main loop ran at cuBLAS's
    # rate (0.99 ms per 7248 of K against 1.00) where the three-stage wsp ran 1.02-1.05
    "wgmma192x192wsp4": (192, 192, 4, (40, 152)),
}
# tiles only the TMA producer loads -> the tile taken where TMA can't take the layout
TMA_ONLY = {"wgmma192x192ws": "wgmma128x256ws", "wgmma192x192wsp": "wgmma128x256ws",
            "wgmma192x192wsp4": "wgmma128x256ws"}
# tiles staging C one warpgroup at a time -> the tile taken where C's map doesn't fit
PER_WG_STAGING = {"wgmma192x192wsp4": "wgmma192x192wsp"}
# a 192x192 tile where its waves x tile area cost at most this share of the chosen tile's
# (session 26, H100, case_bench ms 192 / 128x256ws, two rounds: bf16 ki,jk 7248 (0.95) 1.133 /
# 1.283, 1.132 / 1.279; fp16 1.177 / 1.257). Session 27 (H100, 192x192wsp, ms, two rounds):
# the ccsd GEMM steps at 0.963 and 0.985 win too -- bf16 njmi,kmln 1.425, 1.412 against
# 256x128ws's 1.571, 1.576 (fp16 1.474 / 1.598), njmi,mknl 1.450, 1.474 against 128x256ws's
# 1.471, 1.492: the square tile stages 12.5% fewer bytes per product, worth a few % of padding.
# EINC_WGMMA_192=0: never (EINC_WGMMA_192_SHARE: experiments)
WIDE_SQUARE = float(os.environ.get("EINC_WGMMA_192_SHARE", "1.0")) if os.environ.get("EINC_WGMMA_192", "1") != "0" else 0.0
# Clusters of two CTAs on adjacent tiles of 192x192wsp, the shared operand's slice copied once
# per pair by TMA multicast (cuBLAS's bf16 kernel for ki,jk: 2-CTA clusters, 26% fewer L2 bytes).
# Session 28, ncu on bf16 ki,jk 7248: H200 "a" 1.14, "b" 1.17 against 1.17-1.19 ms (SM
# throughput 94 against 91%); H100 "b" 1.10 against 1.13 (cuBLAS 1.06); wall clock within noise.
# EINC_WGMMA_CLUSTER: "a" (default) prefers horizontal pairs sharing A, "b" vertical pairs
# sharing B (cluster_mode: the pairing along an even tile count), "nomc" (experiment) vertical
# pairs each copying all of B, "0" none
CLUSTER = os.environ.get("EINC_WGMMA_CLUSTER", "a")
CLUSTER = {"1": "b", "0": ""}.get(CLUSTER, CLUSTER)
CLUSTER_TILES = ("wgmma192x192wsp", "wgmma192x192wsp4")
# 192x192ws -> its persistent C-apart form (staged_apart). Session 27, H100, ncu on bf16 ki,jk
# 7248: 1.13 -> 1.11 ms, SM throughput 89.1 -> 91.6%; case_bench ms (wsp / ws, two rounds) bf16
# 1.160, 1.135 / 1.148, 1.180, fp16 1.179, 1.190 / 1.218, 1.240. EINC_WGMMA_192P=0: never
WIDE_APART = os.environ.get("EINC_WGMMA_192P", "1") != "0"
# EINC_WGMMA_192P4=1 or 2: its four-stage form (wgmma192x192wsp4) instead, each warpgroup's
# leader storing its rows of C (1) or a producer-warpgroup thread storing them (2). Off: session
# 30, H100, bf16 ki,jk 7248 -- ncu ms 1.10 (wsp) / 1.08 / 1.08, but the wall clock (rotated A/B,
# 10 rounds) 1.139 / 1.152 / 1.125 against per-round spreads of 0.88-1.20x, no mode ahead
# (where the tile is forced with the switch off, as tests and tune do: 2)
WIDE_FOUR = os.environ.get("EINC_WGMMA_192P4", "0")
M_STRIPS = {"wgmma128x128ws1": 2, "wgmma128x128ws1p": 2}  # 64-row strips per consumer warpgroup
# C staged beside the ring (grid: the resident blocks only) -> the tile staging in the ring,
# taken where C's type makes the block outgrow shared memory (4-byte C on 128x256wsp)
SEPARATE_STAGING = {"wgmma128x128ws1p": "wgmma128x128ws1", "wgmma128x256wsp": "wgmma128x256ws",
                    "wgmma192x192wsp": "wgmma192x192ws", "wgmma192x192wsp4": "wgmma192x192ws"}
SMEM_BLOCK = 227 * 1024  # the most dynamic shared memory one block may have (sm_90)
# blocks per SM the launch bounds ask for (the rest: 1)
MIN_BLOCKS = {"wgmma128x128s3": 2, "wgmma128x128ws1": 2, "wgmma128x128ws1p": 2}
SHORT_K = 128  # K (elements) up to which a step takes the three-stage tile
ENABLED = os.environ.get("EINC_WGMMA", "1") != "0"  # EINC_WGMMA=0: mma.sync even on sm_90
# the warp-specialised tiles' producer copies boxes by TMA where tma_maps fits
# (EINC_WGMMA_TMA=0: the 16-byte cp.async producer everywhere)
TMA = os.environ.get("EINC_WGMMA_TMA", "1") != "0"
# the C-apart tiles store C by TMA boxes where c_map fits (kernels/wgmma.cuh
# einc_wgmma_epilogue_tma); session 18e, bf16 ms, default -> TMA store, two alternations:
# ao2mo ap,srqp 0.088 / 0.081 -> 0.076 / 0.078, M 16384 N 128 K 4096 0.089 / 0.078 -> 0.060 /
# 0.060, M 8192 N 256 K 4096 0.059 / 0.060 -> 0.050 / 0.050. EINC_WGMMA_TMA_STORE=0: the
# threads' 16-byte stores
TMA_STORE = os.environ.get("EINC_WGMMA_TMA_STORE", "1") != "0"
_TMAP_DTYPE = {"float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32", "int8": "UINT8",
               "uint8": "UINT8"}  # raw bits: the tensor cores read them as the instruction's type
MAX_GRID = 2 ** 31 - 1  # blocks per launch (tiles beyond it: grid-stride; tests lower it)
# Stream-K tail (kernels/wgmma.cuh EincWgmmaUnits): the ring-staged warp-specialised tiles
# (one block per SM) run on a persistent grid of one block per SM; the whole waves' tiles are
# walked as they are, the last partial wave's are cut into even runs of k slices, one per
# block, whose partial tiles meet in a scratch. Taken where the last wave would leave at
# least SK_MIN_GAIN of the machine idle and every run has SK_MIN_SLICES slices or more.
# EINC_WGMMA_STREAMK=0: the plain grid, one block per tile.
# Only 256x128ws takes it (session 23f, ncu at fixed clocks, SK / plain, twice: bf16 njmi,kmln
# 1.41 / 1.45, 1.44 / 1.46 ms). On 128x256ws it measured 2-3% slower (bf16 ki,jk 7248 1.25 /
# 1.23, 1.25 / 1.21; fp16 8192^3 1.71 / 1.66, 1.65 / 1.66): the hardware's dispatch of a
# one-block-per-tile grid already absorbs most of a last half-wave there.
STREAM_K = os.environ.get("EINC_WGMMA_STREAMK", "1") != "0"
SK_TILES = tuple(os.environ.get("EINC_WGMMA_SK_TILES", "wgmma256x128ws").split(","))  # (experiments)
# setmaxnreg targets of a stream-K tile where its own (0: keep 96 each) leave the consumers too
# few registers for the partial-tile sums (256x128ws spilled 186 bytes; 48 / 104 none: its cp.async
# producer, with the tile counter, spilled 22 bytes at 40). The
# targets must fit the block's launch allocation (640 x 96): 128 x 48 + 512 x 104 = 59392; a
# consumer asking for more than the producer gave back waits forever (40 / 112 hung on the H200)
SK_REGS = {"wgmma256x128ws": (48, 104)}
SK_MIN_SLICES = 8
SK_MIN_GAIN = 0.02
# N-major B descriptor: (leading, stride) byte offsets between 1024-byte atoms along n and
# along k (measured on the H200; see benchmarks/NOTES.md)
MN_OFFSETS = {"lbo": "atom_n", "sbo": "atom_k"}


def choose_tile(step: Step) -> str:
    # the kernel's M and N: after the swap that puts C's unit stride on N (a step's own M
    # and N picked 256x128ws for lki,jl->kji, whose kernel M is 376: 0.198 ms; 128x256ws 0.151)
    lay = gett_layout(step, 128, 128, metadata=False)
    ext = {"batch": lay.ext["b"], "m": lay.ext["m"], "n": lay.ext["n"]}
    tiles = lambda bm, bn: ext["batch"] * _cdiv(ext["m"], bm) * _cdiv(ext["n"], bn)
    area = lambda bm, bn: _cdiv(ext["m"], bm) * bm * _cdiv(ext["n"], bn) * bn  # padded output
    # a tabled M costs the cp.async producer a lookup per row and slice (njmi,kmln below);
    # TMA boxes need M one strided mode of A only (C's rows have their offsets in the epilogue)
    m_ok = not lay.tabled["m"] or (TMA and _collapsed(lay.G["m"], lay.ta) is not None)
    ws_fits = m_ok and lay.ext["k"] >= 256
    if step.compute.kind == "f" and m_ok and lay.ext["k"] <= SHORT_K and tiles(128, 128) >= 2 * sm_count():
        # one or two slices per tile: two blocks per SM, each one producer and one consumer
        # warpgroup (bf16, session 14b, same runs, ms, against the three-stage all-loader
        # tile): ao2mo bq,srqa 0.164 / 0.163 -> 0.145 / 0.146, ap,srqp 0.131 / 0.127 ->
        # 0.122 / 0.115, ccsd_t amji,cbkm 0.100 / 0.099 -> 0.098 / 0.105 (see staged_apart too)
        return "wgmma128x128ws1"
    if step.compute.kind == "f" and ws_fits:
        # fp16/bf16/tf32 8192^3 NN and TN (scripts/mma_tiles.py, cuBLAS in the same run):
        # warp-specialised 128x256 0.88-0.96x cuBLAS, 256x128 0.79-0.87x, the all-loader
        # tiles 0.62-0.74x (barrier-bound). The wider tile wins ties; the other where it
        # pads less. TCCG bf16, old tile -> ws (same day): tabled N and K lnim,kmjn 277 ->
        # 338 TFLOP/s, njmi,mknl 315 -> 301, tabled N lki,jl (K = 384) 205 -> 218, but with
        # M tabled too njmi,kmln 342 -> 130 (its 128 loader threads look row offsets up
        # every slice) and with short K ao2mo ap,srqp (K = 96) 75 -> 36, ccsd_t (K = 24)
        # 27 -> 22 (the per-tile handoff and epilogue are not overlapped): those keep the
        # all-loader tiles. With N tabled, ties go to 256x128 (the producer looks up half as
        # many B rows per slice): bf16 njmi,mknl 2.97 -> 2.30 ms, lnim,kmjn 3.08 -> 2.35
        # (session 7, scripts/tile_sweep.py, same run; untabled 7248^3 keeps 128x256: 1.11 vs 1.29).
        order = ("wgmma256x128ws", "wgmma128x256ws") if lay.tabled["n"] else ("wgmma128x256ws", "wgmma256x128ws")
        dims = lambda t: WGMMA_TILES[t][:2]
        # (one wave at >= 90%, e.g. 128 tiles: M 16384 N 256 K 4096 bf16 0.093 -> 0.069 ms against
        # the all-loader 128x128's 256 tiles, M 8192 N 512 K 8192 0.153 -> 0.105; session 14e)
        fits = [(area(*dims(t)), i, t) for i, t in enumerate(order) if 10 * tiles(*dims(t)) >= 9 * sm_count()]
        if not fits:
            return "wgmma128x128"
        best = min(fits)[2]
        # whole waves of 192x192 where the chosen tile leaves a partial one (long K only: up to
        # 1024 the C-apart 128x256wsp wins; untabled N: the measured case)
        waves = lambda t: _cdiv(tiles(*dims(t)), sm_count()) * dims(t)[0] * dims(t)[1]
        if TMA and not lay.tabled["n"] and lay.ext["k"] > 1024 and waves("wgmma192x192ws") <= WIDE_SQUARE * waves(best):
            return "wgmma192x192ws"
        return best
    return loader_tile(step)


def staged_apart(step: Step, tile: str, out_bytes: int) -> str:
    """``tile``, or its persistent form with C staged apart from the ring where that measured
    faster; both need a 16-bit C (a 4-byte one makes 128x256 outgrow shared memory, and was
    not timed on ws1p).
    ws1 -> ws1p (K <= 128 already): session 14c, bf16, ms, ap,srqp 0.110 -> 0.092, bq,srqa 0.151
    -> 0.117, cr,srba 0.143 -> 0.106; 14f, M 16384 N 4096 K 128 0.096 -> 0.075 (twice).
    128x256ws -> 128x256wsp for K <= 1024: session 14e, ms,
    lki,jl bf16 0.140-0.150 -> 0.125, fp16 0.141 -> 0.119, abk,kcd (K = 512) 0.893 -> 0.72-0.76,
    M 8192 N 4096 K 256 0.070 -> 0.060-0.066; at K = 8192 a tie (8192^3 1.498 / 1.495, 14d)."""
    if out_bytes != 2:
        return tile
    if tile == "wgmma128x128ws1":
        return "wgmma128x128ws1p"
    if tile == "wgmma128x256ws" and gett_layout(step, 128, 128, metadata=False).ext["k"] <= 1024:
        return "wgmma128x256wsp"
    if tile == "wgmma192x192ws" and WIDE_APART:
        return "wgmma192x192wsp4" if WIDE_FOUR in ("1", "2") else "wgmma192x192wsp"
    return tile


def loader_tile(step: Step) -> str:
    """The all-loader tile for ``step`` (choose_tile's choice where no warp-specialised one fits)."""
    lay = gett_layout(step, 128, 128, metadata=False)
    tiles = lambda bm, bn: lay.ext["b"] * _cdiv(lay.ext["m"], bm) * _cdiv(lay.ext["n"], bn)
    if step.compute.kind == "f" and lay.ext["k"] <= SHORT_K and tiles(128, 128) >= 2 * sm_count():
        # one or two slices per tile: two blocks per SM overlap one's epilogue with the
        # other's loads (bf16, same run: ao2mo bq,srqa->srba 42.4 -> 66.5 TFLOP/s, ccsd_t
        # amji,cbkm 24.2 -> 26.1, ap,srqp 71.1 -> 72.3; scripts/tile_sweep.py)
        return "wgmma128x128s3"
    # int8, tabled-M and short-K steps keep the all-loader tiles (the warp-specialised ones
    # pass int8's tests but were not timed on it); 8192^3 fp16/bf16 NN measured them at
    # 256x128 0.72/0.74x cuBLAS, 128x256 0.68/0.65x, 128x128 0.61/0.62x -- four
    # warpgroups hide more latency than two
    if tiles(256, 128) >= sm_count():
        return "wgmma256x128"
    return "wgmma128x256" if tiles(128, 256) >= sm_count() else "wgmma128x128"


def stream_k(tile: str, tiles: int, k: int, itemsize: int) -> int:
    """Blocks of the stream-K grid for ``tiles`` output tiles over K = ``k`` elements of
    ``itemsize`` bytes (128-byte slices), or 0 (the plain grid). The gain is the share of the
    last wave's slots left idle: 1653 tiles on 132 SMs (bf16 7248^2) are 12.52 waves run as 13, 3.7%.

    >>> stream_k("wgmma256x128ws", 1653, 7248, 2), stream_k("wgmma256x128ws", 1584, 7248, 2)
    (132, 0)
    """
    grid = min(sm_count(), MAX_GRID)
    nk = _cdiv(k, 128 // itemsize)
    tail = tiles % grid
    if not STREAM_K or tile not in SK_TILES or tail == 0 or tail * nk < SK_MIN_SLICES * grid:
        return 0
    waves = tiles / grid
    if 1 - waves / -(-tiles // grid) < SK_MIN_GAIN:
        return 0
    if grid * grid * nk >= 2 ** 32:  # the kernel cuts the runs in 32 bits
        return 0
    return grid


def sk_scratch(tile: str, tiles: int, grid: int) -> tuple:
    """(scratch bytes, bytes zeroed): an arrival count per tail tile and the whole waves' tile
    counter (256-byte padded, kernels/wgmma.cuh einc_wgmma_sk_counts_bytes), then two slots of
    BM x BN 4-byte accumulators per block."""
    bm, bn = WGMMA_TILES[tile][:2]
    counts = ((tiles % grid + 1) * 4 + 255) // 256 * 256
    return counts + 2 * grid * bm * bn * 4, counts


def smem_bytes(tile: str, out_bytes: int = 4, tma_c: bool = False) -> int:
    bm, bn, stages, ws = WGMMA_TILES[tile]
    # + room to align the base to 1024 bytes (+ two mbarriers per stage when warp-specialised)
    ring = stages * (bm + bn) * 128 + 1024 + (16 * stages if ws else 0)
    if tile in PER_WG_STAGING:  # + a turn barrier per consumer warpgroup; 64 rows of C's boxes
        return (ring - 1024 + 16 * (bm // 64) + 1023) // 1024 * 1024 + 1024 + 64 * bn * out_bytes
    if tile in SEPARATE_STAGING and tma_c:  # C's boxes (bn/64 of bm 128-byte rows), 1024-byte aligned
        return (ring - 1024 + 1023) // 1024 * 1024 + 1024 + bm * bn * out_bytes
    if tile in SEPARATE_STAGING:  # C's tile (row pitch bn + 8) and row offsets, 128-byte aligned
        return (ring + 127) // 128 * 128 + bm * (bn + 8) * out_bytes + bm * 8
    return ring


def c_map(lay, out_dtype, bm: int, bn: int):
    """C's tensor map for the TMA-store epilogue (emit.Tmap, ``ptr`` 0), or None where the
    layout does not fit it: a 16-bit C whose M (and batch) group is one strided mode of it
    in multiples of 16 bytes and whose N group is one unit-stride mode -- or two modes, the
    inner unit-stride in a multiple of 64 (lki,jl->kji: kernel N = k i; the map is then
    (n_in, m, n_out[, batch]), see split_c); boxes of 64 columns by bm rows, 128-byte
    swizzle; out-of-range rows and columns are not written."""
    E = np.dtype(out_dtype).itemsize
    G, ext = lay.G, lay.ext
    if E != 2 or bn % 64 or not (G["m"] and G["n"]) or max(ext.values()) >= 2 ** 31:
        return None
    m, n = _collapsed(G["m"], 0), _collapsed(G["n"], 0)
    b = _collapsed(G["b"], 0) if G["b"] else (1, 0)
    ok = lambda s: 0 < s * E < 2 ** 40 and (s * E) % 16 == 0
    if m is None or b is None or not ok(m[1]):
        return None
    if n is not None and n[1] == 1:
        dims, strides, box = (ext["n"], ext["m"]), (m[1] * E,), (64, bm)
    else:
        split = _n_split(G["n"])
        if split is None or not ok(split[1][1]):
            return None
        (n_in, _), (n_out, s_out) = split
        dims, strides, box = (n_in, ext["m"], n_out), (m[1] * E, s_out * E), (64, bm, 1)
    if ext["b"] > 1:
        if not ok(b[1]):
            return None
        dims, strides, box = dims + (ext["b"],), strides + (b[1] * E,), box + (1,)
    return Tmap(0, _TMAP_DTYPE.get(np.dtype(out_dtype).name, "UINT16"), dims, strides, box)


def _n_split(modes):
    """((inner extent, 1), (outer extent, outer stride)) of C's N group seen as two modes of
    C (outermost first in ``modes``), the inner unit-stride and a multiple of 64 elements
    (a 64-column box never crosses it), or None."""
    merged = _merge([(e, (st[0],)) for e, st in modes])
    if len(merged) != 2 or merged[1][1][0] != 1 or merged[1][0] % 64:
        return None
    return (merged[1][0], 1), (merged[0][0], merged[0][1][0])


def split_c(cmap, lay) -> bool:
    """Whether C's map (c_map) splits N into two dimensions."""
    return cmap is not None and len(cmap.dims) == 3 + (lay.ext["b"] > 1)


def threads(tile: str) -> int:
    """Threads per block: 128 per consumer warpgroup (BM/64) and one producer warpgroup."""
    bm, _, _, ws = WGMMA_TILES[tile]
    return (bm // 64 // M_STRIPS.get(tile, 1) + (ws is not None)) * 128


def operand_fit(step: Step, op: str):
    """(layout, A fits, B fits, B K-major): which operands wgmma can read as they are.

    A fits when it is K-major in 16-byte pieces; B when it is K-major, or N-major for
    16-bit types (the instruction transposes). ``layout.ta``/``tb`` say which of the
    step's operands plays A and B (they swap when C is unit-stride along M)."""
    E, transposable = _PTX[op][2], _PTX[op][4]
    lay = gett_layout(step, 128, 128, metadata=False)
    G, ta, tb = lay.G, lay.ta, lay.tb
    ve = 16 // E
    a_ok = not _has_unit(G["m"], ta) and _vec_ok(G, "k", ta, ve)
    if not _has_unit(G["n"], tb) and _vec_ok(G, "k", tb, ve):
        return lay, a_ok, True, True
    if transposable and _has_unit(G["n"], tb) and _vec_ok(G, "n", tb, ve):
        return lay, a_ok, True, False
    return lay, a_ok, False, True


def layout_ok(step: Step, op: str) -> tuple | None:
    """(layout, B K-major?) when both operands can be fed to wgmma, else None."""
    lay, a_ok, b_ok, b_kmaj = operand_fit(step, op)
    return (lay, b_kmaj) if a_ok and b_ok else None


def _collapsed(modes, t: int):
    """(extent, stride) of a group's modes (outermost first) seen as one mode of tensor t,
    or None when they are not one contiguous block of it (C's rows may still be tabled).

    >>> _collapsed([(84, (9216, 96, 0)), (96, (1, 1, 0))], 1), _collapsed([(84, (9216, 96, 0)), (96, (1, 1, 0))], 0)
    ((8064, 1), None)
    """
    merged = _merge([(e, (st[t],)) for e, st in modes])  # emit's contiguity rule, for t alone
    return (merged[0][0], merged[0][1][0]) if len(merged) == 1 else None


def cluster_mode(pref: str, tiles_m: int, tiles_n: int) -> str:
    """The pairing of a clustered tile: ``pref`` ("a": horizontal pairs sharing A, "b":
    vertical pairs sharing B) where its tile count along the pair is even, else the other
    where that one is even, else none (a half-empty pair leaves one CTA idle for a tile).

    >>> cluster_mode("a", 38, 38), cluster_mode("a", 38, 37), cluster_mode("a", 5, 7), cluster_mode("nomc", 5, 7)
    ('a', 'b', '', 'nomc')
    """
    if pref not in ("a", "b"):
        return pref
    count = {"a": tiles_n, "b": tiles_m}
    other = "b" if pref == "a" else "a"
    return pref if count[pref] % 2 == 0 else other if count[other] % 2 == 0 else ""


def cluster_pairing(cfg: str, lay) -> str:
    """The cluster pairing (cluster_mode) of tile ``cfg`` on layout ``lay``, given that its
    operands load by 2-D TMA maps: none unless the tile clusters, there is no batch and the
    pair count stays 32-bit. The emitter and `einc explain` (cost.py) both ask here."""
    if CLUSTER in ("", "0") or cfg not in CLUSTER_TILES or lay.ext["b"] != 1:
        return ""
    bm, bn = WGMMA_TILES[cfg][:2]
    tm, tn = lay.tiles(bm, bn)
    if lay.ext["m"] * lay.ext["n"] >= 2 ** 40 or tm * tn >= 2 ** 31:
        return ""
    return cluster_mode(CLUSTER, tm, tn)


def tma_maps(lay, op: str, b_kmaj: bool, bm: int, bn: int, half: str = "") -> tuple | None:
    """The (A, B) tensor maps (emit.Tmap) of a warp-specialised tile, or None where TMA
    cannot take the layout: every group must be one strided mode of the operand reading
    it (C's may be tabled: the epilogue has its offsets), K (and an N-major B's N)
    unit-stride, the other strides multiples of 16 bytes, extents within the 32-bit box
    coordinates. A box is one stage's slice: KE k by BM rows (A),
    KE by BN (K-major B) or 64 columns by KE k-rows (N-major B, BN/64 boxes per slice).
    A batch group becomes a third dimension. ``half`` ("a" or "b"): that operand's box covers
    half the slice (clusters of two, each CTA copying one half into both).

    >>> import einc.api
    >>> from einc.codegen.cuda.emit import gett_layout
    >>> p = einc.api.plan_for("bij,bjk->bik", [(3, 512, 256), (3, 256, 640)], "float16", backend="cuda")
    >>> a, b = tma_maps(gett_layout(p.steps[0], 128, 256), "float16", False, 128, 256)
    >>> a.dims, a.strides, a.box, b.dims, b.strides, b.box
    ((256, 512, 3), (512, 262144), (64, 128, 1), (640, 256, 3), (1280, 327680), (64, 64, 1))
    """
    E = _PTX[op][2]
    KE = 128 // E
    G, ext = lay.G, lay.ext
    if not (G["m"] and G["n"] and G["k"]) or max(ext.values()) >= 2 ** 31:
        return None
    ta, tb = lay.ta, lay.tb
    one = {(g, t): _collapsed(G[g], t) for g, t in (("m", ta), ("k", ta), ("n", tb), ("k", tb), ("b", ta), ("b", tb))}
    if any(v is None for (g, _), v in one.items() if g != "b" or G["b"]):
        return None  # a group that is not one strided mode of the operand reading it
    stride = lambda g, t: one[g, t][1] if G[g] else 0
    batch = ext["b"] > 1
    ok = lambda s: 0 < s * E < 2 ** 40 and (s * E) % 16 == 0
    if stride("k", ta) != 1 or not ok(stride("m", ta)):
        return None
    if b_kmaj:
        if stride("k", tb) != 1 or not ok(stride("n", tb)):
            return None
        b_dims, b_str, b_box = (ext["k"], ext["n"]), (stride("n", tb) * E,), (KE, bn // (2 if half == "b" else 1))
    else:
        if stride("n", tb) != 1 or not ok(stride("k", tb)) or bn % 64:
            return None
        b_dims, b_str, b_box = (ext["n"], ext["k"]), (stride("k", tb) * E,), (64, KE // (2 if half == "b" else 1))
    a_dims, a_str, a_box = (ext["k"], ext["m"]), (stride("m", ta) * E,), (KE, bm // (2 if half == "a" else 1))
    if batch:
        if not (ok(stride("b", ta)) and ok(stride("b", tb))):
            return None
        a_dims, a_str, a_box = a_dims + (ext["b"],), a_str + (stride("b", ta) * E,), a_box + (1,)
        b_dims, b_str, b_box = b_dims + (ext["b"],), b_str + (stride("b", tb) * E,), b_box + (1,)
    dt = _TMAP_DTYPE[op]
    return (Tmap(ta, dt, a_dims, a_str, a_box), Tmap(tb, dt, b_dims, b_str, b_box))


def _mma_struct(op: str, bn: int, b_kmaj: bool) -> str:
    suffix, acc, e, k, transposable = _PTX[op]
    n_acc = bn // 2
    regs = ", ".join(f"%{i}" for i in range(n_acc))
    cons = "+f" if acc == "float" else "+r"
    outs = ", ".join(f'"{cons}"(d[{i}])' for i in range(n_acc))
    if acc == "int":
        tail = "p"
    elif transposable:
        tail = f"p, 1, 1, 0, {0 if b_kmaj else 1}"
    else:
        tail = "p, 1, 1"
    # (atom along n, atom along k) byte strides: the loaders' stage has atoms along n first,
    # the TMA stage (BN/64 boxes of 64 k-rows) along k first
    lbo, sbo = (1024, 1024 * (bn // 64))
    lbo_t, sbo_t = (128 // e * 128, 1024)
    if MN_OFFSETS["lbo"] == "atom_k":
        lbo, sbo, lbo_t, sbo_t = sbo, lbo, sbo_t, lbo_t
    return (f"struct EincWgmmaOp {{\n"
            f"  static constexpr int E = {e}, NACC = {n_acc}, LBO_MN = {lbo}, SBO_MN = {sbo}, LBO_MN_T = {lbo_t}, "
            f"SBO_MN_T = {sbo_t};\n"
            f"  using Acc = {acc};\n"
            f"  static __device__ __forceinline__ void run({acc}* d, unsigned long long a, unsigned long long b) {{\n"
            f"    asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %{n_acc + 2}, 0;\\n"
            f" wgmma.mma_async.sync.aligned.m64n{bn}k{k}{suffix} {{{regs}}}, %{n_acc}, %{n_acc + 1}, {tail};\\n}}\\n\"\n"
            f"                 : {outs}\n"
            f"                 : \"l\"(a), \"l\"(b), \"r\"(1));\n"
            f"  }}\n}};\n")


def emit_wgmma(plan: Plan, step: Step, dtypes, compute, op: str, tile: str | None = None) -> CudaStepKernel | None:
    """The wgmma kernel for ``step``, or None when its operands don't fit the layouts."""
    fit = layout_ok(step, op) if ENABLED else None
    if fit is None:
        return None
    _, b_kmaj = fit
    cfg = tile or staged_apart(step, choose_tile(step), dtypes[0].itemsize)
    if cfg in SEPARATE_STAGING and smem_bytes(cfg, dtypes[0].itemsize) > SMEM_BLOCK:
        cfg = SEPARATE_STAGING[cfg]
    if cfg in TMA_ONLY and not (TMA and tma_maps(gett_layout(step, *WGMMA_TILES[cfg][:2], metadata=False),
                                                  op, b_kmaj, *WGMMA_TILES[cfg][:2])):
        cfg = TMA_ONLY[cfg]
    BM, BN, S, ws = WGMMA_TILES[cfg]
    if ws and tile is None:
        groups = gett_layout(step, BM, BN, metadata=False)
        if groups.tabled["m"] and not (TMA and tma_maps(groups, op, b_kmaj, BM, BN)):
            cfg = loader_tile(step)  # the tabled M was only for TMA, which this layout can't take
            BM, BN, S, ws = WGMMA_TILES[cfg]
    lay = gett_layout(step, BM, BN)
    nthreads = threads(cfg)
    tmaps = (tma_maps(lay, op, b_kmaj, BM, BN) if ws and TMA else None) or ()
    cl2 = cluster_pairing(cfg, lay) if len(tmaps) == 2 else ""
    if cl2 in ("a", "b"):
        tmaps = tma_maps(lay, op, b_kmaj, BM, BN, half=cl2)
    # C's boxes one warpgroup's 64 rows high, stored by its leader (1) or the storer thread (2)
    cw = (1 if WIDE_FOUR == "1" else 2) if cfg in PER_WG_STAGING else 0
    cmap = c_map(lay, dtypes[0], 64 if cw else BM, BN) if tmaps and TMA_STORE and cfg in SEPARATE_STAGING else None
    if cmap is not None and len(cmap.dims) != len(tmaps[0].dims) + split_c(cmap, lay):
        cmap = None  # (the batch is all three maps' dimension or none's)
    if cw and cmap is None:
        return emit_wgmma(plan, step, dtypes, compute, op, PER_WG_STAGING[cfg])
    csplit = split_c(cmap, lay)
    tmaps += (cmap,) if cmap else ()
    if csplit:  # the epilogue's column -> (n_in, n_out): c_n carries n_in
        words = list(lay.words)
        words[C_N_WORD] = cmap.dims[0]
        lay = replace(lay, words=tuple(words))
    smem = smem_bytes(cfg, dtypes[0].itemsize, cmap is not None)
    tiles_m, tiles_n = lay.tiles(BM, BN)
    tiles = lay.ext["b"] * tiles_m * tiles_n
    sk = 0 if cl2 else stream_k(cfg, tiles, lay.ext["k"], _PTX[op][2])
    scratch, scratch_zero = sk_scratch(cfg, tiles, sk) if sk else (0, 0)
    ws = SK_REGS.get(cfg, ws) if sk else ws
    tout, tcn, tan, _ = _types(dtypes, compute)
    b = lambda x: "true" if x else "false"
    flags = (lay.tabled["b"], lay.tabled["m"], lay.tabled["n"], lay.tabled["k"], b_kmaj)
    struct = _mma_struct(op, BN, b_kmaj)
    rank = len(tmaps[0].dims) if tmaps else 0
    tma_opt = int(os.environ.get("EINC_WGMMA_TMA_OPT", "0")) if rank else 0  # kernels/wgmma.cuh TMA_OPT
    group_m = int(os.environ.get("EINC_WGMMA_GROUP_M", "8"))  # A/B measurements of the tile order
    mh = M_STRIPS.get(cfg, 1)
    gm = f", {group_m}" + (f", {mh}" if mh > 1 else "") if group_m != 8 or mh > 1 else ""
    tcfg = (f"EincWgmmaTile<{BM}, {BN}, {S}, true, {ws[0]}, {ws[1]}{gm}>" if ws
            else f"EincWgmmaTile<{BM}, {BN}, {S}{', false, 0, 0' + gm if gm else ''}>")
    key = (VERSION, "wgmma", cfg, op, flags, lay.swapped, dtypes[0].name, compute.name,
           tuple(d.name for d in dtypes[1:]), struct, rank, tma_opt, group_m, cmap is not None, csplit, bool(sk),
           cw, "cl2" + cl2 if cl2 else "")
    name = _name("wgmma", key, dtypes)
    sep = cfg in SEPARATE_STAGING
    # einc_wgmma_gett_ws's trailing template arguments, as far as this kernel needs them:
    # TMA_RANK, TMA_OPT, SEP, TMA_C, TM, C_SPLIT, SK
    tail = [str(rank), str(tma_opt)] if rank or sep or sk else []
    tail += [b(sep)] if sep or sk else []
    tail += [b(cmap), "EincTmaps3" if cmap else "EincTmaps"] if cmap or sk or cl2 or cw else []
    tail += [b(csplit)] if csplit or sk or cl2 or cw else []
    if sk:
        tail += ["true"]
    elif cl2 or cw:  # SK, CL2[, CW]
        tail += ["false", {"b": "1", "nomc": "2", "a": "3", "": "0"}[cl2]] + ([str(cw)] if cw else [])
    targs = ", ".join([tcfg, "EincWgmmaOp", *map(b, flags), tout, tcn, tan] + tail)
    a_arg, b_arg = ("in1", "in0") if lay.swapped else ("in0", "in1")
    tm_param, tm_arg = (f", const __grid_constant__ EincTmaps{'3' if cmap else ''} tm", ", &tm") if rank else ("", "")
    if sk:
        tm_arg = (tm_arg or ", nullptr") + ", static_cast<unsigned char*>(scratch)"
    spec = (struct + f"\nextern \"C\" __global__ void __launch_bounds__({nthreads}, {MIN_BLOCKS.get(cfg, 1)})"
            + (" __cluster_dims__(2, 1, 1)" if cl2 else "") + "\n"
            f"{name}(void* out, const void* in0, const void* in1, {'void* scratch, ' if sk else ''}"
            f"const EincGettMeta meta{tm_param}) {{\n"
            f"  einc_wgmma_gett{'_ws' if ws else ''}<{targs}>(out, {a_arg}, {b_arg}, meta{tm_arg});\n}}\n")
    g = lay.gdesc
    family = (f"wgmma (Hopper warpgroup tensor cores, m64n{BN}k{_PTX[op][3]}{_PTX[op][0]}); "
              f"{BM}x{BN} tiles, {BM // 64 // mh} warpgroup{'s' if BM // 64 // mh > 1 else ''}"
              + (f" of {mh} 64-row strips" if mh > 1 else "")
              + (f" + a producer warpgroup (mbarrier full/empty per stage"
                 + (f", setmaxnreg {ws[0]}/{ws[1]}" if ws[0] else "") + ")" if ws else "")
              + f", {S}-stage ring of 128-byte K slices in "
              f"128-byte-swizzled shared memory; groups batch={g('b')} M={g('m')} N={g('n')} "
              f"K={g('k')}; A K-major, B {'K' if b_kmaj else 'N'}-major, "
              + (f"TMA boxes (cp.async.bulk.tensor.{rank}d, one producer thread)" if rank else "16-byte cp.async")
              + ("; operands swapped (C^T = B^T A^T: C is unit-stride along M)" if lay.swapped else ""))
    resident = MIN_BLOCKS.get(cfg, 1) * sm_count()
    grid = sk or (min(tiles, resident, MAX_GRID) if sep else min(tiles, MAX_GRID))
    if cl2:  # whole clusters, each walking pairs of tiles
        pairs = _cdiv(tiles_m, 2) * tiles_n if cl2 != "a" else tiles_m * _cdiv(tiles_n, 2)
        # (EINC_WGMMA_CLUSTERS: a lower cap, an experiment -- session 28, H100: 60 or 64 of the
        # 66 co-resident clusters made bf16 ki,jk 1.27 or 1.19 ms against 1.10)
        cap = int(os.environ.get("EINC_WGMMA_CLUSTERS", "0")) or resident // 2
        grid = 2 * max(1, min(pairs, cap, MAX_GRID // 2))
    launch = [(f"launch:   1-D grid of {grid} persistent {nthreads}-thread blocks ({resident // sm_count()} per SM) walking "
               f"the {BM}x{BN} output tiles, C staged apart from the ring"
               + (f" one warpgroup's 64 rows at a time (the warpgroups take turns; "
                  f"{'each warpgroup' if cw == 1 else 'a producer-warpgroup thread'} stores them)" if cw else "")
               if sep else
               f"launch:   1-D grid of {grid} persistent {nthreads}-thread blocks: the first {tiles - tiles % grid} of "
               f"the {tiles} {BM}x{BN} output tiles walked whole, the last {tiles % grid} as stream-K runs of k slices "
               f"(one per block; split tiles summed through a {scratch}-byte scratch, its {scratch_zero}-byte "
               f"arrival counts zeroed per launch)" if sk else
               f"launch:   1-D grid, one {nthreads}-thread block per {BM}x{BN} output tile "
               f"(grid-stride, capped at 2^31-1)") + f"; {smem} bytes of dynamic shared memory; sm_90a",
              f"metadata: EincGettMeta, {8 * len(lay.words)} bytes; {len(lay.tables)} offset table(s)"]
    if cl2:
        launch[0] += (f"; clusters of two CTAs (__cluster_dims__) on {'horizontally' if cl2 == 'a' else 'vertically'} "
                      f"adjacent tiles" + (f", each copying its own {'B' if cl2 == 'a' else 'A'} box and half of the shared "
                                           f"{cl2.upper()} slice into both by TMA multicast" if cl2 != "nomc" else ""))
    dims = lambda t, w: ((("k", "m") if w == "a" else (("n_in", "m", "n_out") if csplit else ("n", "m")) if w == "c"
                          else ("k", "n") if b_kmaj else ("n", "k")) + ("batch",) * (lay.ext["b"] > 1))
    launch += [f"tensor map {w}: EincTmaps{'3' if cmap else ''}.{w} (by value, after the metadata) = cuTensorMapEncodeTiled over "
               f"{'out' if t.ptr == 0 else f'in{t.ptr - 1}'} as {t.dtype} dims ({', '.join(dims(t, w))}) innermost first, box {t.box}, 128-byte "
               f"swizzle, zero fill; extents and strides are the call's (runtime/cuda.py encode_tmap, per pointer)"
               + ("; the epilogue stores C's tile by these boxes" if w == "c" else "")
               for w, t in zip("abc", tmaps)]
    header = _header(step, family, dtypes, compute, lay.modes_line(step), launch)
    source = _assemble(header, ["common.cuh", "gett.cuh", "mma.cuh", "wgmma.cuh"], spec)
    fallback = emit_mma(plan, step, dtypes, compute, op)
    return CudaStepKernel(name, source, key, (max(1, grid), 1, 1), (nthreads, 1, 1), smem,
                          lay.tables, 8 * len(lay.words), lay.words, (lay.ta, lay.tb), fallback, "sm_90a",
                          tmaps=tmaps, scratch=scratch, scratch_zero=scratch_zero, cluster=2 if cl2 else 1)
