"""A GPU cost model: how long each CUDA kernel family should take on one plan step.

    predicted = max(compute, memory) + launch
    compute   = FLOPs / (peak[family] x tile efficiency x wave efficiency x gather)   (gett, mma)
              = max(FLOPs / peak[loop], waves x terms per lane x LOOP_TERM_S)        (reduce, generic)
    memory    = bytes / (bandwidth x access efficiency)

    tile efficiency = M N K / (M, N, K each rounded up to the tile)   (ragged tiles do padded work)
    wave efficiency = tiles / (ceil(tiles / slots) x slots)           (the last wave runs part-empty)
    slots = SMs x tiles resident per SM; gather < 1 for mode groups read through offset tables

It exists to rank a handful of candidates (gett or reduce, which tile, how many K slices),
so it is deliberately coarse. Constants come from benchmarks/NOTES.md (one H200) where
they were measured and say "guess" where they were not; `einc tune` times the candidates
and its stored winners override the model (einc/tuned.py).

>>> p = predict_gemm(4096, 4096, 4096, 1, 3 * 4 * 4096 ** 2, "gett/float32", "128x128x8")
>>> round(2 * 4096 ** 3 / (p.seconds - p.launch) / 1e12)  # TFLOP/s, as measured
38
"""
from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass, replace

import numpy as np

from .dtypes import kind as dtype_kind

SUMMED = ("k", "sum")


@dataclass(frozen=True)
class DeviceProfile:
    """What the model knows about one GPU: SMs, bandwidth, each family's peak, launch cost."""

    name: str
    sms: int
    bandwidth: float  # bytes/s, what a device-to-device copy reaches
    peaks: tuple  # (family, FLOP/s): the best rate each kernel family reaches at full occupancy
    launch: float  # seconds one kernel launch adds (host call + gap between kernels)
    threads_per_sm: int = 2048
    clock: float = 1.0  # the SMs' boost clock relative to the H200's 1980 MHz (the skinny rates)
    arch: str = "sm_90"  # which tensor-core kernel the emitter picks (wgmma on sm_90)

    def peak(self, family: str) -> float:
        return dict(self.peaks)[family]


H200 = DeviceProfile(
    name="H200", sms=132, bandwidth=4.1e12, launch=5e-6,  # copy 4.13 TB/s; launch 5-11 us host-side
    peaks=(
        # SIMT gett at its 128x128x8 tile: 38.0 TFLOP/s measured on fp32 4096^3, which runs at
        # wave efficiency 1024/1056 = 0.97, so the family's peak is 38.0 / 0.97 = 39.2 (FFMA ~67).
        ("gett/float32", 39.2e12),
        ("gett/float64", 19.6e12),  # half of fp32 (FP64 FMA peak ~34): expected, not measured
        ("gett/int32", 19.6e12),  # IMAD at about half the FFMA rate: expected
        ("gett/int64", 4.9e12),  # 64-bit integer multiply-add is emulated: guess
        ("gett/convert", 19.6e12),  # fp16/int8/int16 inputs converted on load (15-25 expected)
        # reduce / generic kernels on a GEMM-shaped step: one serial multiply-add loop per lane,
        # operands from L1/L2; by compute itemsize (guess: never measured on a GEMM)
        ("loop/4", 2.0e12), ("loop/8", 1.0e12), ("loop/16", 0.5e12),
        # tensor cores (mma.sync / wgmma): scripts/mma_tiles.py on 8192^3 measured fp16 508, bf16 481,
        # tf32 254 TFLOP/s and int8 948 TOP/s (H200, wgmma) at wave efficiency 0.97. Recalibrate
        # from `einc tune` / benchmark results as the kernels change.
        ("mma/f16", 524e12), ("mma/bf16", 496e12), ("mma/tf32", 262e12), ("mma/i8", 977e12),
        # skinny (small N): TCCG intensli fp32 on the H200 (session 9, scripts/case_bench.py):
        # 0.124-0.408 ms for the eight, 1.04-1.39x under the old 16e12 (geomean 1.19; issue-
        # bound, ~50-60% issue active, ncu), and 6-9 TFLOP/s on the converting bf16 path
        ("skinny/4", 19e12), ("skinny/8", 8e12), ("skinny/convert", 9e12),
        # skinny_mma (fp16/bf16 on mma.sync, emit_skinny_mma.py): memory-side limited (see
        # predict_skinny); the tensor cores' own cap is far above what N <= 32 needs (guess)
        ("skinny/mma", 60e12),
        # smallmn (whole small output per block, K in parts): abcd,dbea->ec 72^5 measured the
        # kernel at ~190 us fp32 (20 TFLOP/s at wave efficiency 0.92) and ~400 us fp64;
        # stall-bound (ncu: issue active 48%, shared-memory latency and barriers). The
        # converting (fp16/bf16) path is a guess at 0.6x fp32.
        ("smallmn/4", 22e12), ("smallmn/8", 10.5e12), ("smallmn/convert", 13e12),
        # fp32 on the fp64 tensor cores (mma m16n8k16 .f64; fp64 tensor peak ~67 TFLOP/s): 72^5
        # measured the kernel at ~140 us on 80x72 fragments (session 11: DMMA pipe ~50% busy)
        ("smallmn/dmma", 33e12),
    ))
# The H100 SXM (80GB HBM3) is the H200's GH100 chip at the same 132 SMs and clock, so its
# kernel families run at the H200's rates (bf16 GEMM 8192^3 710 TFLOP/s on the H100 in session
# 33 against 700-720 on the H200; fp32 4096^3 53.4 against 52-54); its HBM3 is slower: a
# device-to-device copy of the intensli operands reached 2.90-2.98 TB/s and the suites' 1 GiB
# copy 2.97-3.03 (sessions 26-33; the H200's 4.1-4.3).
H100 = replace(H200, name="H100", bandwidth=2.95e12)
# Two H100s not lent here, from their data sheets (guess): the SXM's copy is 0.88 of its
# sheet's 3.35 TB/s, taken for the others' sheets; their boost clocks (PCIe 1755, NVL 1785 MHz
# against 1980) scale the peaks, and the PCIe card's 114 SMs are sized by profile_for
def _clocked(name: str, bandwidth: float, mhz: float) -> DeviceProfile:
    """The H200's profile at another boost clock (its peaks and skinny rates scaled) and HBM."""
    c = mhz / 1980
    return replace(H200, name=name, bandwidth=bandwidth, clock=c, peaks=tuple((f, r * c) for f, r in H200.peaks))


H100_PCIE = _clocked("H100 PCIe", 0.88 * 2.0e12, 1755)
H100_NVL = _clocked("H100 NVL", 0.88 * 3.9e12, 1785)
# the first key found in the device's name wins: the longer names first
PROFILES = {"H100 PCIe": H100_PCIE, "H100 NVL": H100_NVL, "H100": H100, "H200": H200}

# SIMT gett tiles relative to the 128x128x8 peak: 4x4 outputs per thread load twice the
# shared-memory data per FMA of 8x8 (guess until `einc tune` results calibrate it)
TILE_RATE = {"128x128x8": 1.0, "64x64x8": 0.6,
             "128x128x16": 1.03,  # 4096^3 fp32 0.89 -> 0.91x cuBLAS, 8192^3 0.89 -> 0.92x (session 6)
             "96x96x8": 0.85,  # 4096^3 fp32 37.9 against 128x128x8's 44.8 TFLOP/s (session 9, same run)
             # fp32 on the fp64 tensor cores (gett_dm.cuh), 4096^3 against 128x128x16's 2.97-3.00 ms
             # (session 21): 64x128x16d 2.57-2.60 (emit.big_tile's default where it applies, so the
             # model prices 128x128 steps at it), 128x64x16d 2.85 before the copies' fast path (its
             # tabled-K default: ccsd lki,kjl 1.02 ms against 64x128x16d's 1.05), 128x128x16d 2.83-2.89;
             # cost.simt_tiles leaves them out of the ranking, `einc tune` measures all three. Those
             # ratios put on the family's peak (session 1's 38 TFLOP/s) priced the fp32 GEMMs at
             # 0.84-0.85 of what they take (H100, session 33: 4096^3 2.57 ms against 3.04, 8192^3
             # 20.4 against 24.3; TCCG ki,jk 0.85), so session 34 scales all three by 1.18
             # (SIMT 128x128x8 ran at 44.8 in session 9, not 38; the SIMT tiles' own rates are
             # left as they were: they decide small steps against the loop kernels)
             "128x128x16d": 1.26, "64x128x16d": 1.41, "128x64x16d": 1.3,
             # tensor cores, relative to the wgmma peaks above (8192^3 fp16, scripts/mma_tiles.py):
             # wgmma 256x128 / 128x256 / 128x128 ~526 / 508 / 485, mma.sync 128x128k128 261,
             # 128x128 235, 128x256 231, 64x64 179 TFLOP/s
             "wgmma256x128": 1.0, "wgmma128x256": 0.97, "wgmma128x128": 0.92,
             # warp-specialised (session 6, same run as 256x128's 531 fp16 / 521 bf16 / 265 tf32):
             # 128x256ws 672 / 724 / 376, 256x128ws 604 / 597 / 339; with the TMA producer
             # (session 10, `einc bench` and scripts/step_breakdown.py): 128x256ws 8192^3 fp16 714,
             # bf16 749, tf32 340; 256x128ws bf16 7056x8064x8064 (jinm,lknm->lkji) 689-713
             "wgmma128x256ws": 1.4, "wgmma256x128ws": 1.4,
             "wgmma128x128s3": 0.92,  # short K only (not timed on a long-K GEMM): 128x128's rate
             # short K only; 8192^3 bf16 0.79x cuBLAS against 128x256ws's 0.88 (session 14b)
             "wgmma128x128ws1": 1.2, "wgmma128x128ws1p": 1.3,  # (ao2mo ws1 -> ws1p: -17 to -26%)
             "wgmma128x256wsp": 1.45,  # K <= 1024: 10-16% faster than 128x256ws (session 14e)
             # 192x192 (session 26, H100, bf16 ki,jk 7248: 1.13 against 128x256ws's 1.28 ms, of which
             # 1.05 is the wave count the model prices apart: ~1.08x the rate); its persistent C-apart
             # form 2% faster again (session 27, ncu 1.13 -> 1.11 ms)
             "wgmma192x192ws": 1.5, "wgmma192x192wsp": 1.53, "wgmma192x192wsp4": 1.53,
             "mma128x128k128": 0.5, "mma128x128": 0.45, "mma128x256": 0.44, "mma64x64": 0.34}
# share of copy bandwidth each memory access pattern reaches
ACCESS = {"rows": 1.0,  # team per output, vector loads: row-dot measured 0.98-1.02x copy
          "columns": 0.75,  # thread per output, coalesced scalar loads: 70-80% expected
          "strided": 0.35,  # the permutation kernel reads strided: ~1-2 TB/s measured
          # tiles fitted to the extents, vector loads and stores (session 19c, H200, bf16):
          # njmi->jinm 1.7-1.8 TB/s (168-byte output rows), kmjn->kjnm 2.3, kmln->lknm 2.7-2.9
          "transpose": 0.5,
          # rows copy (shared unit-stride run): bf16 lnim->linm 2.1-2.2 TB/s, fp32 kjli->lkji 3.0-3.2
          "copy_rows": 0.55,
          # the rows copy by the TMA unit (session 24a, copy_bench.py): bf16 njmi->mnji 3.23 TB/s,
          # kmln->lkmn 3.03, lnim->linm 3.57, fp32 abc->bac 3.49 (copy_rows 2.55-2.93 in that run)
          "copy_tma": 0.8,
          "permute": 0.7,  # tiles of whole modes (>= 32-element runs each side): guess
          "generic": 0.5,  # div/mod index decoding, no vector loads: guess
          "gett": 1.0,
          "skinny": 0.9,  # every input byte once, 32-byte sectors or better: guess
          "smallmn": 0.85,  # both operands along their unit-stride K modes, runs of 4-8: guess
          "smallmn/gather": 0.25,  # an operand with no unit stride in K: 4-byte gathers (guess)
          "stream": 0.85,  # fp32: C stored along its unit stride, runs of 24+ (compute-bound: guess)
          "stream/mma": 0.54,  # bf16 ccsd_t: 184 MB of C in 83 us (ncu, H200) = 2.2 TB/s
          "stream/box": 0.70}  # the same with C by TMA boxes (emit_stream.c_box_tiling): 62 us = 3.0 TB/s
# the fp32 stream kernel's multiply-add rate relative to the SIMT family's peak: ccsd_t's
# 4.42 GFLOP in 179-180 us (ncu, H200) at wave efficiency 0.976
STREAM_RATE = 0.64
LOOP_TERM_S = 30e-9  # one summed term per lane: L2 latency over 4 accumulators in flight (guess)
TIE = 0.10  # predictions closer than this are within the model's error
# gett or reduce: the loop kernels' rate on a GEMM is a guess, so the model overrides the
# measured size rule (plan.CUDA_GETT_MIN_WORK) only when one side is predicted this much faster
STRATEGY_MARGIN = 0.5
# gett mode groups of several modes that don't merge are addressed through offset tables:
# the step's rates by how many modes beyond one per group that takes (0, 1, 2, 3, 4+), fitted
# on TCCG-24 fp32 (H200): measured / table-free prediction was 0.81-1.05 with one extra
# mode, 0.62-0.73 with two, 0.18-0.39 with three (ccsd_t, 0.24-0.32, stays over-predicted)
GATHER = (1.0, 0.93, 0.65, 0.35, 0.3)


@dataclass(frozen=True)
class Prediction:
    """A step's predicted time and its parts (seconds)."""

    seconds: float
    compute: float
    memory: float
    launch: float
    family: str  # e.g. "gett 128x128x8", "reduce rows"
    tile_eff: float = 1.0
    wave_eff: float = 1.0
    stream_k: bool = False  # the wgmma tile's last wave cut into k runs (emit_wgmma.stream_k)

    @property
    def bound(self) -> str:
        """What limits the step: compute, memory, or the launch itself."""
        if self.launch > max(self.compute, self.memory):
            return "launch"
        return "compute" if self.compute >= self.memory else "memory"


_AS_DEVICE: tuple | None = None  # (name, SMs) while as_device() holds


def device_name() -> str:
    """Device 0's name (e.g. "NVIDIA H200"), or "" without a usable GPU. Cached."""
    return _AS_DEVICE[0] if _AS_DEVICE else _device_name()


def device_sms() -> int:
    """Device 0's SM count, or 0 without a usable GPU. Cached."""
    return _AS_DEVICE[1] if _AS_DEVICE else _device_sms()


@contextlib.contextmanager
def as_device(name: str, sms: int):
    """Plan, emit and price as though device 0 were ``name`` with ``sms`` SMs (no GPU needed):
    a saved result re-priced on its own card (report.model_rows), two trees' choices compared
    for a card not lent (scripts/choice_diff.py).

    >>> with as_device("NVIDIA H100 PCIe", 114):
    ...     profile_for().name
    'H100 PCIe at 114 SMs'
    """
    global _AS_DEVICE
    saved, _AS_DEVICE = _AS_DEVICE, (name, sms)
    try:
        yield
    finally:
        _AS_DEVICE = saved


def _on_device0(query, default):
    """``query(cu, check, device)`` on device 0, or ``default`` without a usable GPU."""
    try:
        from .runtime.cuda import _driver, available, check
        if not available():
            return default
        cu = _driver()
        return query(cu, check, check(cu.cuDeviceGet(0)))
    except Exception:  # no driver, no cuda-python: plan as for the default profile
        return default


@functools.lru_cache(maxsize=1)
def _device_name() -> str:
    def name(cu, check, dev):
        raw = check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
        text = raw.decode(errors="replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
        return text.split("\0")[0].strip()
    return _on_device0(name, "")


@functools.lru_cache(maxsize=1)
def _device_sms() -> int:
    attr = lambda cu: cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    return _on_device0(lambda cu, check, dev: int(check(cu.cuDeviceGetAttribute(attr(cu), dev), "SM count")), 0)


def profile_for(name: str | None = None, sms: int | None = None) -> DeviceProfile:
    """The profile whose name occurs in the device's name (the H200's otherwise), sized to
    the device's SM count: a card with another count (H100 PCIe 114, A100 108, H20 78) gets
    the profile's per-SM rates times its SMs, so grids, waves and peaks follow the card.
    Without arguments: device 0's name and count (none without a GPU: the H200 as it is).

    >>> profile_for("NVIDIA H200").sms, profile_for("").name
    (132, 'H200')
    >>> p = profile_for("NVIDIA H20", sms=78); p.sms, p.name, round(p.peak("mma/bf16") / 1e12)
    (78, 'H200 at 78 SMs', 293)
    >>> p = profile_for("NVIDIA H100 PCIe", sms=114); p.name, round(p.bandwidth / 1e12, 2)
    ('H100 PCIe at 114 SMs', 1.76)
    """
    if name is None:
        name, sms = device_name(), device_sms()
    return _sized(_named(name), sms or 0)


def _named(name: str) -> DeviceProfile:
    for key, prof in PROFILES.items():
        if key.lower() in name.lower():
            return prof
    return H200


@functools.lru_cache(maxsize=16)
def _sized(prof: DeviceProfile, sms: int) -> DeviceProfile:
    if sms <= 0 or sms == prof.sms:
        return prof
    scale = sms / prof.sms  # bandwidth stays: HBM, not the SMs, sets it
    return replace(prof, name=f"{prof.name} at {sms} SMs", sms=sms,
                   peaks=tuple((fam, rate * scale) for fam, rate in prof.peaks))


# --------------------------------------------------------------------------------------
# the two formulas

def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def wave_efficiency(units: int, slots: int) -> float:
    """Share of the GPU's slots busy over all waves: 264 tiles on 132 SMs = 1.0, 133 = 0.5."""
    return units / (_cdiv(units, slots) * slots) if units > 0 else 1.0


def tile_efficiency(M: int, N: int, K: int, BM: int, BN: int, BK: int) -> float:
    """Useful over padded work of ragged tiles: M, N, K rounded up to the tile."""
    if M * N * K == 0:
        return 1.0
    return M * N * K / (_cdiv(M, BM) * BM * _cdiv(N, BN) * BN * _cdiv(K, BK) * BK)


def _tile_dims(tile: str, itemsize: int = 4) -> tuple:
    from .codegen.cuda.emit import GETT_TILES
    if tile in GETT_TILES:
        return GETT_TILES[tile][:3]
    try:  # a tensor-core tile: a K slice is 64 bytes (mma) or 128 (wgmma) whatever the dtype
        from .codegen.cuda.emit_mma import MMA_TILES
        from .codegen.cuda.emit_wgmma import WGMMA_TILES
        if tile in WGMMA_TILES:
            bm, bn = WGMMA_TILES[tile][:2]
            return bm, bn, max(1, 128 // itemsize)
        bm, bn = MMA_TILES[tile][:2]
        return bm, bn, max(1, 64 // itemsize)
    except (ImportError, KeyError):
        return 128, 128, 8


def resident_tiles(tile: str, family: str) -> int:
    """Tiles one SM runs at once (emit.py's __launch_bounds__ minimum blocks per SM): the
    wave unit is SMs x this, so 132 fp32 128x128 tiles fill only half the H200's slots."""
    if tile == "64x64x8" or (tile in ("128x128x8", "128x128x16") and family in ("gett/float32", "gett/int32")):
        return 2
    from .codegen.cuda.emit import DM_TILES, NARROW_TILES
    return DM_TILES[tile][1] if tile in DM_TILES else NARROW_TILES.get(tile, 1)


def predict_gemm(M, N, K, batch, nbytes, family, tile, profile=H200, itemsize=4, gather=1.0) -> Prediction:
    """A tiled GEMM kernel (gett or mma) on a batch x M x N x K step moving ``nbytes``;
    ``gather`` scales compute and memory rates for operands addressed through offset tables."""
    BM, BN, BK = _tile_dims(tile, itemsize)
    flops = 2 * M * N * K * batch
    te = tile_efficiency(M, N, K, BM, BN, BK)
    tiles = batch * _cdiv(M, BM) * _cdiv(N, BN)
    we = wave_efficiency(tiles, profile.sms * resident_tiles(tile, family))
    from .codegen.cuda.emit_wgmma import stream_k
    sk = stream_k(tile, tiles, K, itemsize) > 0
    if sk:
        we = 1.0  # the last wave's tiles are cut into even k runs across every SM
    rate = profile.peak(family) * TILE_RATE.get(tile, 1.0) * te * we * gather
    compute = flops / rate if flops else 0.0
    memory = nbytes / (profile.bandwidth * ACCESS["gett"] * gather)
    return Prediction(max(compute, memory) + profile.launch, compute, memory, profile.launch,
                      tile if tile.startswith(("mma", "wgmma")) else f"{family.split('/')[0]} {tile}", te, we, sk)


def _lanes_per_output(outputs: int, terms: int, access: str, slots: int) -> int:
    """Threads per output, as emit.py sizes them: a team (rows) or a split sum (columns)."""
    if access == "generic" or terms <= 1:
        return 1
    if access == "rows":
        team = min(32, 1 << max(0, (_cdiv(terms, 16) - 1).bit_length()))
        while team < 256 and outputs * team < slots and terms >= team * 32:
            team *= 2
        return team
    split = 1
    while split < 32 and outputs * split < slots and terms >= split * 16:
        split *= 2
    return split


def predict_loop(flops, nbytes, outputs, terms, access, itemsize, profile=H200) -> Prediction:
    """A reduce / generic kernel: ``outputs`` sums of ``terms`` terms each, ``nbytes`` moved.

    Its lanes are threads, not tiles: the whole grid runs at most at the loop's peak, and
    each lane at most one term per LOOP_TERM_S, so few lanes over long sums are latency-bound.
    """
    slots = profile.sms * profile.threads_per_sm
    per = _lanes_per_output(outputs, terms, access, slots)
    lanes = max(1, outputs * per)
    peak = profile.peak(f"loop/{min(16, max(4, itemsize))}") * (0.5 if access == "generic" else 1.0)
    compute = max(flops / peak, _cdiv(lanes, slots) * _cdiv(terms, per) * LOOP_TERM_S) if flops else 0.0
    memory = nbytes / (profile.bandwidth * ACCESS[access])
    family = access if access in ("generic", "transpose", "permute", "copy_rows", "copy_tma") else f"reduce {access}"
    return Prediction(max(compute, memory) + profile.launch, compute, memory, profile.launch, family,
                      1.0, wave_efficiency(lanes, slots))


# --------------------------------------------------------------------------------------
# families

def tensor_core_family(in_dtypes, compute, precision: str = "highest", work: int = 0) -> str | None:
    """The `mma` family a gett step runs on (mirrors emit_mma.mma_op), or None for SIMT."""
    try:
        from .codegen.cuda.emit_mma import MIN_WORK
    except ImportError:
        return None
    if len(in_dtypes) != 2 or in_dtypes[0] != in_dtypes[1] or work < MIN_WORK:
        return None
    name, compute = np.dtype(in_dtypes[0]).name, np.dtype(compute)
    if name in ("float16", "bfloat16") and compute == np.float32:
        return "mma/f16" if name == "float16" else "mma/bf16"
    if name == "float32" and precision == "tf32" and compute == np.float32:
        return "mma/tf32"
    if name in ("int8", "uint8") and compute.kind in "iu" and compute.itemsize <= 4:
        return "mma/i8"
    return None


def gett_family(in_dtypes, compute, precision: str = "highest", work: int = 0) -> str:
    """The peak a gett step runs at: tensor cores, the cp.async SIMT path, or the converting one."""
    tc = tensor_core_family(in_dtypes, compute, precision, work)
    if tc:
        return tc
    compute = np.dtype(compute)
    if any(np.dtype(d) != compute for d in in_dtypes):
        return "gett/convert"
    return {"float32": "gett/float32", "float64": "gett/float64", "int32": "gett/int32",
            "int64": "gett/int64"}.get(compute.name, "gett/convert")


def simt_tiles() -> tuple:
    """The SIMT gett tiles the model can rank (emit.GETT_TILES, largest first)."""
    from .codegen.cuda.emit import DM_TILES, GETT_TILES
    # 128x128x16 and, for fp32 on sm_90, the DM default: emit.big_tile turns a planned 128x128x8
    # into them (predict_step prices that); the other DM tiles: `einc tune`, which measures them
    return tuple(t for t in GETT_TILES if t in TILE_RATE and t != "128x128x16" and t not in DM_TILES)


def best_tile(M, N, K, batch, nbytes, family, profile=H200, narrow=False) -> tuple:
    """(tile, Prediction) of the fastest SIMT tile; ties go to the larger tile. ``narrow``:
    the 96-wide tile may compete (gett_config says so from the step's layout; split and
    strategy rankings leave it out, so a split never assumes a tile its step won't get)."""
    if family.startswith("mma"):
        return None, predict_gemm(M, N, K, batch, nbytes, family, "mma128x128", profile)
    best = None
    from .codegen.cuda.emit import NARROW_TILES
    for tile in simt_tiles():
        if tile in NARROW_TILES and not narrow:
            continue
        p = predict_gemm(M, N, K, batch, nbytes, family, tile, profile)
        if best is None or p.seconds < best[1].seconds * (1 - 1e-9):
            best = (tile, p)
    return best


def predict_split(M, N, K, batch, split, items, family, profile=H200) -> tuple:
    """(tile, seconds) of gett over ``split`` K slices plus the reduce summing the slices.

    ``items`` = (input, output, compute) itemsizes; the partial sums are in the compute type.
    """
    item_in, item_out, item_c = items
    outputs = batch * M * N
    nbytes = batch * (M * K + K * N) * item_in + (split * outputs * item_c if split > 1 else outputs * item_out)
    tile, g = best_tile(M, N, K // split, batch * split, nbytes, family, profile)
    if split == 1:
        return tile, g.seconds
    r = predict_loop(split * outputs, split * outputs * item_c + outputs * item_out, outputs, split,
                     "columns", item_c, profile)
    return tile, g.seconds + r.seconds


def _groups(modes):
    size = lambda k: int(np.prod([m.extent for m in modes if m.kind == k], dtype=np.int64))
    return size("m"), size("n"), size("k"), size("batch")


def gemm_strategy(modes, in_dtypes, res_dtype, compute, splits, reduce_split, fallback: str,
                  profile=None) -> str:
    """"gett" or "reduce" for a GEMM-shaped CUDA step: the faster prediction.

    gett is predicted at its best tile and K split (``splits``: the candidates), reduce as
    a loop kernel, with the plan's split of a long reduction (``reduce_split`` slices) when
    it has one. Unless one is predicted STRATEGY_MARGIN faster, ``fallback`` (the measured
    size rule) decides: launch-bound steps and mid-size GEMMs are within the model's error.
    """
    profile = profile or profile_for()
    M, N, K, batch = _groups(modes)
    item_in, item_out, item_c = np.dtype(in_dtypes[0]).itemsize, np.dtype(res_dtype).itemsize, np.dtype(compute).itemsize
    family = gett_family(in_dtypes, compute, work=M * N * K * batch)
    gett = min(predict_split(M, N, K, batch, s, (item_in, item_out, item_c), family, profile)[1] for s in splits)
    outputs, S = batch * M * N, reduce_split
    nbytes = batch * (M * K + K * N) * item_in + (outputs * S * item_c if S > 1 else outputs * item_out)
    red = predict_loop(2 * outputs * K, nbytes, outputs * S, K // S, "columns", item_c, profile).seconds
    if S > 1:  # the partial sums' own reduce step
        red += predict_loop(outputs * S, outputs * S * item_c + outputs * item_out, outputs, S, "columns",
                            item_c, profile).seconds
    if max(gett, red) <= min(gett, red) * (1 + STRATEGY_MARGIN):
        return fallback
    return "gett" if gett < red else "reduce"


def predict_skinny(M, N, K, batch, nbytes, in_dtypes, compute, profile=H200) -> Prediction:
    """The skinny kernel (emit_skinny.py) on a step whose small group has N elements."""
    compute = np.dtype(compute)
    family = ("skinny/convert" if any(np.dtype(d) != compute for d in in_dtypes)
              else f"skinny/{8 if compute.itemsize > 4 else 4}")
    # fp16/bf16 at the mma kernels' size: the tensor-core variant (emit_skinny_mma.py)
    tc = tensor_core_family(in_dtypes, compute, work=M * N * max(K, 1) * batch)
    if tc in ("mma/f16", "mma/bf16") and os.environ.get("EINC_SKINNY_MMA") != "0":
        family = "skinny/mma"
    te = N / (max(8, _cdiv(N, 8) * 8)) if N else 1.0
    flops = 2 * M * N * K * batch
    compute_s = flops / (profile.peak(family) * te) if flops else 0.0
    rate = profile.bandwidth * ACCESS["skinny"]
    if family in SKINNY_RATE:  # a rate the SMs set, not the HBM
        rate = min(rate, SKINNY_RATE[family] * profile.sms * profile.clock)
    memory = nbytes / rate
    kernel = "skinny_mma" if family == "skinny/mma" else "skinny"  # (the family emit_skinny dispatches to)
    return Prediction(max(compute_s, memory) + profile.launch, compute_s, memory, profile.launch, kernel, te)


# The skinny kernels' bytes per second per SM. They are issue- and latency-bound (ncu, session
# 33: long_scoreboard the top stall), so their rate follows the SMs, not the HBM. TCCG's eight
# intensli cases (K = 36 to 384): bf16 (skinny_mma) at 1.60 and 1.89 TB/s geometric means in two
# runs on the H100 (5 calls a sample, rotated inputs, launch taken off; intensli-20261208-004306
# and -004340) against a 2.95 TB/s copy, while session 22's H200 (4.2 TB/s copy) ran that day's
# kernel at 1.4-1.8 in the suite, within 10% of the H100's suite rows of the next day; fp32
# (skinny) at 2.0-2.2 on the H100 (1.4-2.3 a case in its suites, geometric means 1.8-2.0) and
# 1.8-2.5 in the H200's suites of sessions 14-22. A cap on the memory side only: the fp32
# kernel's FLOP rate (skinny/4) still bounds the three-mode cases (akb: 143 us predicted, 119
# measured; by bytes alone 115)
SKINNY_RATE = {"skinny/mma": 1.75e12 / 132, "skinny/4": 2.1e12 / 132}

# The tensor-core kernels on a GEMM whose N is small (TCCG intensli bf16, N = 24, H200):
# measured rate / predict_gemm's, by table modes as GATHER. 0.23 with one tabled mode
# (akb,jk->jba 19.6 TFLOP/s), 0.11 with two (akbc,jk->cjba 7.1), 0.02-0.08 with three.
SMALL_N_TENSOR_CORES = (0.25, 0.23, 0.11, 0.04, 0.04)


def _forced(switch: str, applies):
    """A kernel family's environment switch: "0" never, "1" wherever it ``applies()``;
    False also where it does not apply; None: the cost model decides."""
    force = os.environ.get(switch, "")
    if force == "0" or not applies():
        return False
    return True if force == "1" else None


def skinny_pays(step, in_dtypes, res_dtype, compute, precision="highest", profile=None) -> bool:
    """Whether a CUDA gett step should run on the skinny kernel: it applies (a group of at
    most 32 elements against a large one) and beats the tiled kernels' prediction (tensor
    cores can still win a compute-heavy bf16 step whose N fills part of a tile)."""
    from .codegen.cuda.emit_skinny import skinny_applies, skinny_layout
    dtypes = [np.dtype(res_dtype)] + [np.dtype(d) for d in in_dtypes]
    forced = _forced("EINC_SKINNY", lambda: skinny_applies(step, dtypes, np.dtype(compute)))
    if forced is not None:
        return forced
    profile = profile or profile_for()
    M, N, K, batch = _groups(step.modes)
    small, big = (N, M) if skinny_layout(step).ta == 1 else (M, N)
    mine = predict_skinny(big, small, K, batch, step.bytes, in_dtypes, compute, profile).seconds
    family = gett_family(in_dtypes, compute, precision, M * N * K * batch)
    tile = "wgmma128x128" if family.startswith("mma") else (config_tile(step) or "64x64x8")
    tabled = min(_table_modes(step), len(GATHER) - 1)
    gather = SMALL_N_TENSOR_CORES[tabled] if family.startswith("mma") else GATHER[tabled]
    other = predict_gemm(M, N, K, batch, step.bytes, family, tile, profile, np.dtype(in_dtypes[0]).itemsize, gather)
    return mine <= other.seconds * (1 + TIE)  # a tie (K = 0: no work) goes to skinny


def stream_pays(step, in_dtypes, res_dtype, compute, precision="highest", profile=None) -> bool:
    """Whether a CUDA gett step should run on the stream kernel (emit_stream.py): it applies
    (fp32, K <= emit_stream.K_MAX) and has its shape (the output dominates, several
    waves of tiles). A rule, not a comparison: the tiled prediction of such a step is
    latency-bound far from its model (GATHER's ccsd_t note)."""
    from .codegen.cuda.emit_stream import stream_applies, stream_shape
    dtypes = [np.dtype(res_dtype)] + [np.dtype(d) for d in in_dtypes]
    forced = _forced("EINC_STREAM", lambda: stream_applies(step, dtypes, np.dtype(compute)))
    return forced if forced is not None else stream_shape(step)


def predict_stream(step, in_dtypes, compute, profile=H200) -> Prediction:
    """The stream kernel: compute at the family's peak (SIMT times STREAM_RATE; tensor cores
    for fp16/bf16), K padded to a multiple of 8, and the waves of its two resident blocks per
    SM; memory at the kernel's measured share of the copy bandwidth."""
    from .codegen.cuda.emit_stream import BLOCKS_PER_SM, BM, BN, c_box_tiling
    M, N, K, batch = _groups(step.modes)
    flops = 2 * M * N * K * batch
    family = gett_family(in_dtypes, compute, work=M * N * K * batch)
    mma = family.startswith("mma")  # the fp16/bf16 variant: tensor cores, memory-bound
    cb = c_box_tiling(step, np.dtype(in_dtypes[0]).itemsize) if mma else None
    tm, tn = (cb.tile_m, cb.tile_n) if cb else (BM, BN)
    te = tile_efficiency(M, N, K, tm, tn, 8) * tm * tn / (BM * BN)
    we = wave_efficiency(batch * _cdiv(M, tm) * _cdiv(N, tn), profile.sms * BLOCKS_PER_SM)
    compute_s = flops / (profile.peak(family) * (1.0 if mma else STREAM_RATE) * te * we) if flops else 0.0
    memory = step.bytes / (profile.bandwidth * ACCESS["stream/box" if cb else "stream/mma" if mma else "stream"])
    what = f"stream_mma {tm}x{tn} tiles, C by TMA boxes" if cb else f"{'stream_mma' if mma else 'stream'} {BM}x{BN}"
    return Prediction(max(compute_s, memory) + profile.launch, compute_s, memory, profile.launch, what, te, we)


def predict_smallmn(step, in_dtypes, compute, profile=H200) -> Prediction:
    """The smallmn kernel (emit_smallmn.py) on ``step`` (its batch modes: one block each):
    compute at the family's peak times the micro-tile's padding and idle lanes, the K box's
    padding and the waves; memory at the access pattern's share, plus the partial tiles."""
    from .codegen.cuda.emit_smallmn import geometry
    compute = np.dtype(compute)
    dtypes = [compute] + [np.dtype(d) for d in in_dtypes]
    geo = geometry(step, dtypes, compute)
    lay = geo["lay"]
    family = ("smallmn/dmma" if geo["dm"] else "smallmn/convert"
              if not geo["async_ok"] and any(d != compute for d in dtypes[1:])
              else f"smallmn/{8 if compute.itemsize > 4 else 4}")
    nb, M, N, K = geo["batch"], geo["M"], geo["N"], geo["K"]
    te = M * N / (geo["rp"] * geo["cp"]) if M * N else 1.0
    te *= 1.0 if geo["dm"] else geo["kg"] * geo["tm"] * geo["tn"] / geo["nt"]  # (idle lanes of the last warp)
    box = geo["tx"] * geo["ty"] * geo["nx"] * geo["ny"]
    te *= (lay.x[0] * (lay.y[0] if lay.y else 1)) / box if box else 1.0
    parts = step.option("parts", nb)
    slots = profile.sms * geo["per_sm"]
    if parts == nb:  # one part per batch index: whole parts in waves
        we = wave_efficiency(nb, slots)
    else:  # the flat split: equal ranges of slices, the longest sets the time
        per = nb * geo["slices"] / parts if parts else 1.0
        we = wave_efficiency(parts, slots) * (per / np.ceil(per - 1e-9) if per else 1.0)
    flops = 2 * M * N * K * nb
    compute_s = flops / (profile.peak(family) * te * we) if flops else 0.0
    fast = [abs(lay.x[1][t]) == 1 or (lay.y is not None and abs(lay.y[1][t]) == 1) for t in (1, 2)]
    sizes = [nb * M * K * dtypes[1].itemsize, nb * N * K * dtypes[2].itemsize]
    memory = sum(b / (profile.bandwidth * ACCESS["smallmn" if f else "smallmn/gather"]) for b, f in zip(sizes, fast))
    memory += parts * M * N * compute.itemsize / profile.bandwidth
    return Prediction(max(compute_s, memory) + profile.launch, compute_s, memory, profile.launch,
                      f"smallmn {'dmma ' if geo['dm'] else ''}{geo['rm']}x{geo['rn']} k{geo['bk']}", te, we)


def smallmn_pays(step, in_dtypes, res_dtype, compute, precision="highest", profile=None) -> bool:
    """Whether a CUDA gett step should run on the smallmn kernel: it applies (M and N at most
    emit_smallmn.MN_MAX, no batch, K at least K_MIN) and, cut into the plan's parts and
    with the reduce over them, beats the tiled kernels at their best K split."""
    from dataclasses import replace
    from .codegen.cuda.emit_smallmn import cut_step, flat_parts, smallmn_applies, smallmn_cut
    dtypes = [np.dtype(res_dtype)] + [np.dtype(d) for d in in_dtypes]
    forced = _forced("EINC_SMALLMN", lambda: smallmn_applies(step, dtypes, np.dtype(compute)))
    if forced is not None:
        return forced
    profile = profile or profile_for()
    flat = flat_parts(step, [np.dtype(compute)] + dtypes[1:], np.dtype(compute))
    if flat:
        parts = flat
        mine = predict_smallmn(replace(step, config=(("parts", flat),)), in_dtypes, compute, profile).seconds
    else:
        cut = smallmn_cut(step, [np.dtype(compute)] + dtypes[1:], np.dtype(compute))
        parts = int(np.prod([f for _, f in cut], dtype=np.int64)) if cut else 1
        mine = predict_smallmn(cut_step(step, cut), in_dtypes, compute, profile).seconds
    M, N, K, batch = _groups(step.modes)
    item_c = np.dtype(compute).itemsize
    if parts > 1:  # the reduce over the partial tiles
        mine += predict_loop(parts * M * N, parts * M * N * item_c + M * N * np.dtype(res_dtype).itemsize, M * N,
                             parts, "columns", item_c, profile).seconds
    from .plan import _split_candidates, _summed_outer_first
    family = gett_family(in_dtypes, compute, precision, M * N * K * batch)
    k_exts = [m.extent for m in _summed_outer_first(step)]
    items = (np.dtype(in_dtypes[0]).itemsize, np.dtype(res_dtype).itemsize, item_c)
    gather = GATHER[min(_table_modes(step), len(GATHER) - 1)]
    tiled = min(predict_split(M, N, K, batch, s, items, family, profile)[1] for s in _split_candidates(K, k_exts))
    return mine <= tiled / gather * (1 + TIE)


def gett_config(modes, in_dtypes, compute, nbytes, profile=None, step=None) -> tuple:
    """A CUDA gett step's Step.config: the tile the model predicts fastest (emit reads it);
    ``step`` (the draft step) lets the 96-wide tile in where its layout suits it."""
    profile = profile or profile_for()
    M, N, K, batch = _groups(modes)
    narrow = False
    if step is not None:
        from .codegen.cuda.emit import narrow_tile_fits
        narrow = narrow_tile_fits(step, in_dtypes)
    # the SIMT family (work=0): a step that runs on tensor cores ignores this tile anyway
    tile, _ = best_tile(M, N, K, batch, nbytes, gett_family(in_dtypes, compute), profile, narrow)
    return (("tile", tile),) if tile else ()


def config_tile(step) -> str | None:
    """The tile a gett step's config names, or None (emit then uses its size rule)."""
    return step.option("tile")


# --------------------------------------------------------------------------------------
# whole steps and plans

def loop_access(step) -> str:
    """rows (a team sums a unit-stride summed mode), columns (coalesced) or strided."""
    nt = len(step.strides)
    free = [j for j, m in enumerate(step.modes) if m.kind not in SUMMED]
    summed = [j for j, m in enumerate(step.modes) if m.kind in SUMMED]
    unit_in = lambda j: any(abs(step.strides[t][j]) == 1 for t in range(1, nt))
    fast = min(free, key=lambda j: abs(step.strides[0][j]) or float("inf")) if free else None
    if summed and (fast is None or (any(unit_in(j) for j in summed) and not unit_in(fast))):
        return "rows"
    if fast is None or all(abs(step.strides[t][fast]) <= 1 for t in range(1, nt)):
        return "columns"
    return "strided"


def _table_modes(step) -> int:
    """Modes beyond one per M, N or K group that the kernel reaches through offset tables
    (per element). The batch group's table is read once per tile, so its modes are free:
    a split-K cut of two modes (l by 3 and k by 47) adds two batch modes, no gathering."""
    try:  # the groups alone: gett_layout would also build every offset table (2**27 entries
        from .codegen.cuda.emit import _gett_groups  # for a Sycamore step) just to count them
        G = _gett_groups(step)
    except (ImportError, AttributeError):
        return 0
    return sum(len(G[g]) - 1 for g in ("m", "n", "k") if len(G[g]) > 1)


def _tiled_copy(step, dtypes=None) -> str | None:
    """The copy kernel emit.py runs this copy on ("permute": mode-set tiles, "transpose":
    tiles of the two unit-stride modes, "copy_rows": whole rows of a shared one, "copy_tma":
    those rows by the TMA unit, for a raw copy of ``dtypes`` its maps can describe), or None."""
    try:
        from .codegen.cuda.emit import COPY_TMA, _rows_copy_axis, _transpose_axes
        from .codegen.cuda.emit_copy_tma import copy_tma_layout
        from .codegen.cuda.emit_permute import permute_sets
    except ImportError:
        return None
    if step.strategy not in ("gett", "reduce"):
        return None
    if permute_sets(step) is not None:
        return "permute"
    if _transpose_axes(step) is not None:
        return "transpose"
    if _rows_copy_axis(step) is None:
        return None
    raw = dtypes is not None and dtypes[0] == dtypes[1]
    return "copy_tma" if raw and COPY_TMA[0] and copy_tma_layout(step, dtypes[1].itemsize) else "copy_rows"


def _tensor_core_tile(step, dtypes, compute, precision, profile) -> str:
    """The tile the emitter will use: wgmma's on an sm_90 profile when the operands fit it,
    else mma.sync's (the calibrated peaks are wgmma's; mma.sync reached ~half of them)."""
    from .codegen.cuda import emit_mma, emit_wgmma
    op = emit_mma.mma_op(step, dtypes, compute, precision)
    if profile.arch == "sm_90" and op is not None and emit_wgmma.ENABLED and emit_wgmma.layout_ok(step, op):
        return emit_wgmma.staged_apart(step, emit_wgmma.choose_tile(step), np.dtype(dtypes[0]).itemsize)
    return emit_mma.choose_tile(step)


def predict_step(plan, step, profile=None) -> Prediction:
    """A plan step's predicted time on the CUDA backend (its strategy's kernel family)."""
    profile = profile or profile_for()
    dtypes = [np.dtype(plan.buffers[step.result].dtype)] + [np.dtype(plan.buffers[o].dtype) for o in step.operands]
    compute = np.dtype(step.compute)
    kinds = {m.kind for m in step.modes}
    M, N, K, batch = _groups(step.modes)
    gemm = (step.strategy == "gett" and len(step.operands) == 2 and {"m", "n", "k"} <= kinds
            and "sum" not in kinds and compute.kind in "iuf" and all(dtype_kind(d) in "iuf" for d in dtypes[1:]))
    if gemm and config_tile(step) == "smallmn":
        from .codegen.cuda.emit_smallmn import smallmn_layout
        if smallmn_layout(step, 0) is not None:
            return predict_smallmn(step, dtypes[1:], compute, profile)
    if gemm and config_tile(step) == "stream":
        from .codegen.cuda.emit_stream import stream_applies
        if stream_applies(step, dtypes, compute):
            return predict_stream(step, dtypes[1:], compute, profile)
    if gemm and config_tile(step) == "skinny":
        from .codegen.cuda.emit_skinny import skinny_layout
        lay = skinny_layout(step)
        if lay is not None:
            small, big = (N, M) if lay.ta == 1 else (M, N)
            return predict_skinny(big, small, K, batch, step.bytes, dtypes[1:], compute, profile)
    if gemm:
        from .codegen.cuda.emit import gett_layout
        if gett_layout(step, 128, 128, metadata=False).swapped:  # the kernel's M and N (C^T = B^T A^T)
            M, N = N, M
        family = gett_family(dtypes[1:], compute, getattr(plan, "precision", "highest"), M * N * K * batch)
        if family.startswith("mma"):
            tile = _tensor_core_tile(step, dtypes, compute, getattr(plan, "precision", "highest"), profile)
        else:
            from .codegen.cuda.emit import big_tile
            tile = big_tile(step, dtypes, compute, config_tile(step) or (
                "128x128x8" if batch * _cdiv(M, 128) * _cdiv(N, 128) >= profile.sms else "64x64x8"))
        return predict_gemm(M, N, K, batch, step.bytes, family, tile, profile, dtypes[1].itemsize,
                            GATHER[min(_table_modes(step), len(GATHER) - 1)])
    outputs = int(np.prod([m.extent for m in step.modes if m.kind not in SUMMED], dtype=np.int64))
    terms = int(np.prod([m.extent for m in step.modes if m.kind in SUMMED], dtype=np.int64))
    access = "generic" if step.strategy == "generic" else _tiled_copy(step, dtypes) or loop_access(step)
    return predict_loop(step.flops if terms > 1 or len(step.operands) > 1 else 0, step.bytes, outputs,
                        terms, access, compute.itemsize, profile)


def predict_plan(plan, profile=None) -> tuple:
    """(total seconds, [Prediction per step]) of a CUDA plan: the steps run one after another."""
    profile = profile or profile_for()
    preds = [predict_step(plan, s, profile) for s in plan.steps]
    return sum(p.seconds for p in preds), preds


def seconds_text(s: float) -> str:
    """3.2 us, 1.25 ms, 2.00 s."""
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _loads_by_tma(plan, step, tile: str) -> bool:
    """Whether the warp-specialised wgmma ``tile`` of ``step`` copies its operands by TMA
    (emit_wgmma.tma_maps fits), as `einc explain` says; from the groups alone, no tables."""
    from .codegen.cuda import emit_mma, emit_wgmma
    from .codegen.cuda.emit import gett_layout
    dtypes = [np.dtype(plan.buffers[step.result].dtype)] + [np.dtype(plan.buffers[o].dtype) for o in step.operands]
    op = emit_mma.mma_op(step, dtypes, np.dtype(step.compute), getattr(plan, "precision", "highest"))
    fit = emit_wgmma.layout_ok(step, op) if op is not None else None
    if fit is None or not emit_wgmma.TMA:
        return False
    bm, bn = emit_wgmma.WGMMA_TILES[tile][:2]
    return emit_wgmma.tma_maps(gett_layout(step, bm, bn, metadata=False), op, fit[1], bm, bn) is not None


def _cluster_text(plan, step, tile: str) -> str:
    """`einc explain`'s note on a TMA-loaded tile that runs in clusters of two
    (emit_wgmma.cluster_mode): which operand the pair shares, or nothing."""
    from .codegen.cuda import emit_wgmma
    from .codegen.cuda.emit import gett_layout
    if tile not in emit_wgmma.CLUSTER_TILES:
        return ""
    bm, bn = emit_wgmma.WGMMA_TILES[tile][:2]
    mode = emit_wgmma.cluster_pairing(tile, gett_layout(step, bm, bn, metadata=False))
    return {"a": " clusters of 2 sharing A", "b": " clusters of 2 sharing B", "nomc": " clusters of 2"}.get(mode, "")


def explain_lines(plan, profile=None) -> tuple:
    """`einc explain --backend cuda`'s additions: a line per step (kernel choice, predicted
    time and what bounds it) and closing lines (the total, and whether `einc tune` chose)."""
    from .plan import KSlice
    profile = profile or profile_for()
    total, preds = predict_plan(plan, profile)
    per_step = []
    for s, p in zip(plan.steps, preds):
        cuts = [m.extent for m in s.modes if isinstance(m.label, KSlice) and m.kind not in SUMMED]
        split = int(np.prod(cuts)) if cuts else None
        tma = p.family.startswith("wgmma") and "ws" in p.family and _loads_by_tma(plan, s, p.family)
        parts = s.option("parts")  # (the smallmn kernel's flat split)
        how = (f"{p.family}" + (" (TMA)" if tma else "") + (_cluster_text(plan, s, p.family) if tma else "")
               + (" stream-K tail" if p.stream_k else "")
               + (f" split={split}" if split else "")
               + (f" parts={parts}" if parts else ""))
        why = {"compute": f"compute-bound: tile efficiency {p.tile_eff:.2f}, waves {p.wave_eff:.2f}",
               "memory": "memory-bound", "launch": "launch-bound"}[p.bound]
        per_step.append(f"      gpu: kernel={how}   predicted {seconds_text(p.seconds)} ({why})")
    tail = [f"predicted total: {seconds_text(total)} on the {profile.name} profile "
            f"({len(plan.steps)} launch{'es' if len(plan.steps) != 1 else ''}; einc/cost.py)"]
    tail += list(n for n in plan.notes if n.startswith("tuned:")) or \
        ["choices: the cost model's (`einc tune` stores measured ones)"]
    return per_step, tail
