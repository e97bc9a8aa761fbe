"""CUDA C for one plan step: the kernel family's .cuh text plus a small specialisation.

The kernels themselves are real CUDA C++ in ``kernels/*.cuh`` (read those first). This
module decides only what depends on the step: which family and variant, template
arguments (dtypes, rank bound, which mode groups use offset tables, tile shape), the
launch geometry, and the by-value metadata (extents, strides, table pointers). Sizes and
strides never appear in the source, so every step of one structure shares one kernel:

>>> import einc.api
>>> from einc.codegen.cuda.emit import emit_step
>>> p = einc.api.plan_for("ij,jk->ik", [(64, 32), (32, 16)], "float32", backend="cuda", strategy="gett")
>>> k = emit_step(p, p.steps[0])
>>> k.name.startswith("einc_gett_"), k.block, len(k.meta([])) == k.meta_size
(True, (256, 1, 1), True)
"""
from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...dtypes import kind
from ...errors import EincError
from ...ir import EllipsisDim, Plan, Step, offset_table

KERNELS = Path(__file__).parent / "kernels"
VERSION = "cuda-v1"  # bump when a kernel's code changes meaning; part of every key
# SMs the grids and teams are sized for (kernels are grid-stride, so only speed depends on
# it): 0 = the device's (cost.profile_for().sms; 132, the H200's, without a GPU). Tests and
# experiments set a count here; read it through sm_count().
SM_COUNT = 0


def sm_count() -> int:
    """The SM count grids are sized for: SM_COUNT if set, else device 0's (132 without a GPU)."""
    if SM_COUNT:
        return SM_COUNT
    from ...cost import profile_for
    return profile_for().sms
GRID_CAP = 65535  # blocks per launch; grid-stride loops cover the rest
SUMMED = ("k", "sum")

# numpy dtype -> (storage C type, short tag)
_STORAGE = {
    "bool": ("einc_bool", "b1"), "int8": ("signed char", "i8"), "uint8": ("unsigned char", "u8"),
    "int16": ("short", "i16"), "int32": ("int", "i32"), "int64": ("long long", "i64"),
    "float16": ("einc_half", "f16"), "float32": ("float", "f32"), "float64": ("double", "f64"),
    "complex64": ("einc_c64", "c64"), "complex128": ("einc_c128", "c128"),
    "bfloat16": ("einc_bf16", "bf16"),
}
# compute dtype -> (TC: numpy's compute type in C, TA: what the kernel accumulates in).
# Integers accumulate wide and unsigned (defined wrap-around); truncation to TC on store
# gives numpy's wrapped result.
_COMPUTE = {
    "bool": ("bool", "bool"), "int8": ("signed char", "unsigned"),
    "uint8": ("unsigned char", "unsigned"), "int16": ("short", "unsigned"),
    "int32": ("int", "unsigned"), "int64": ("long long", "unsigned long long"),
    "float16": ("float", "float"), "float32": ("float", "float"), "float64": ("double", "double"),
    "complex64": ("einc_c64", "einc_c64"), "complex128": ("einc_c128", "einc_c128"),
    "bfloat16": ("float", "float"),
}
_ACC_SIZE = {"bool": 1, "unsigned": 4, "unsigned long long": 8, "float": 4, "double": 8,
             "einc_c64": 8, "einc_c128": 16}

# gett tile configurations: (BM, BN, BK, RM, RN)
GETT_TILES = {
    "128x128x8": (128, 128, 8, 8, 8),
    "64x64x8": (64, 64, 8, 4, 4),
    # 16 k per slice, 2 stages: half the barriers and per-slice address work per FLOP;
    # 4-byte types whose K-fast runs fit 4 live registers (not both operands K-fast)
    "128x128x16": (128, 128, 16, 8, 8),
    # 96-wide for a small group of 84-96 (TCCG ao2mo: a 128 tile does 66-75% useful work
    # there), 4-byte types only: 12x8 per thread on 96 threads, 4 blocks per SM (H200, same
    # run: ao2mo bq,srqa / cr,srba 0.470 / 0.488 -> 0.388 / 0.404 ms; the 4096^3 GEMM at 0.85x
    # 128x128x8's rate; 12x4 on 192 threads measured slower everywhere and was dropped)
    "96x96x8": (96, 96, 8, 12, 8),
    # fp32 on the fp64 tensor cores (gett_dm.cuh, emit_gett_dm.py): warps of 64x32 fragments
    # (RM x RN only sizes the block: (BM/64)*(BN/32) warps)
    "128x128x16d": (128, 128, 16, 8, 8),
    "128x64x16d": (128, 64, 16, 8, 8),  # 4 warps, 2 blocks per SM: one block's barrier leaves the other's warps
    "64x128x16d": (64, 128, 16, 8, 8),
}
# the fp64-tensor-core tiles -> (stages, blocks per SM)
DM_TILES = {"128x128x16d": (4, 1), "128x64x16d": (4, 2), "64x128x16d": (4, 2)}
BIG_TILES = ("128x128x8", "128x128x16", *DM_TILES)
DM_DEFAULT = "64x128x16d"  # emit.big_tile's choice for fp32 steps where the DM tiles apply,
DM_TABLED_K = "128x64x16d"  # and where their K is tabled,
DM_A_MFAST = "128x64x16d"   # and where A alone has its unit stride along M (its runs 128 wide)
# the narrow tiles -> blocks per SM their launch bounds ask for (a 170-register budget); the
# one registry: cost ranks them and tune offers them only where narrow_tile_fits
NARROW_TILES = {"96x96x8": 4}


def narrow_tile_fits(step: Step, in_dtypes) -> bool:
    """Whether the 96-wide tile can run and pay on ``step``: 4-byte raw copies (inputs already
    the fp32 / int32 compute type), K one strided group (a tabled K measured slower than
    128x128x16 on ccsd kmli,ljm: 0.521 against 0.483 ms) and not both operands K-fast (runs of
    8 k for both need 8 live registers, so B went element by element: ao2mo ap,srqp 0.447 ->
    0.590 ms)."""
    if not narrow_dtypes(step, in_dtypes):
        return False
    lay = gett_layout(step, 96, 96, metadata=False)
    return not lay.tabled["k"] and not all(_kvec_operands(lay, True))


def narrow_dtypes(step: Step, in_dtypes) -> bool:
    """The narrow tiles' register tile is sized for 4-byte raw copies: fp32 or int32 inputs
    that already are the compute type."""
    compute = np.dtype(step.compute)
    return compute.itemsize == 4 and _async_ok([compute, *map(np.dtype, in_dtypes)], compute)


@dataclass(frozen=True)
class Tmap:
    """A TMA tensor map the runtime encodes for one operand at each new pointer
    (runtime/cuda.py encode_tmap): ``ptr`` its position in the launch's pointers (0: out,
    1..: inputs), ``dtype`` a CUtensorMapDataType name, ``dims`` / ``box`` in elements
    (innermost first), ``strides`` in bytes of dims 1.., ``swizzle`` a CUtensorMapSwizzle
    suffix (128B for the operand stages wgmma reads; NONE for cbox's dense C boxes)."""

    ptr: int
    dtype: str
    dims: tuple
    strides: tuple
    box: tuple
    swizzle: str = "128B"


@dataclass(frozen=True)
class CudaStepKernel:
    """One step's kernel: source, entry name, launch geometry and metadata layout.

    ``meta(table_ptrs)`` packs the by-value metadata struct, given the device addresses
    of ``tables`` (uploaded by the runtime, in order).
    """

    name: str
    source: str
    key: tuple
    grid: tuple
    block: tuple
    smem: int
    tables: tuple
    meta_size: int
    words: tuple = field(default=(), repr=False, compare=False)  # int, or ("table", i)
    # pointer positions (0: out, 1..: inputs) this kernel needs 16-byte aligned, and the
    # kernel to launch instead when one is not
    aligned: tuple = ()
    fallback: "CudaStepKernel | None" = field(default=None, repr=False, compare=False)
    arch: str = ""  # compile for this arch instead of the device's (wgmma: "sm_90a")
    # bytes of per-launch device scratch, passed after the operands (skinny's split tiles);
    # the runtime allocates it with the call's intermediates and zeroes its first
    # scratch_zero bytes before the launch
    scratch: int = 0
    scratch_zero: int = 0
    # TMA tensor maps passed by value after the metadata (one EincTmaps parameter)
    tmaps: tuple = ()
    # CTAs per cluster (__cluster_dims__). Over 1: a persistent kernel whose tile walk
    # follows gridDim, so the runtime may shrink the grid to the clusters resident at once
    cluster: int = 1

    def launchable(self, ptrs) -> "CudaStepKernel":
        """This kernel, or its fallback when a pointer it needs aligned is not."""
        if self.fallback is not None and any(ptrs[i] & 15 for i in self.aligned):
            return self.fallback.launchable(ptrs)
        return self

    def meta(self, table_ptrs: list) -> bytes:
        """The metadata struct's bytes (little-endian 8-byte fields, the C layout)."""
        if len(table_ptrs) != len(self.tables):
            raise ValueError(f"{self.name} needs {len(self.tables)} table pointers, got {len(table_ptrs)}")
        out = bytearray()
        for w in self.words:
            if isinstance(w, tuple):
                out += struct.pack("<Q", int(table_ptrs[w[1]]))
            else:
                out += struct.pack("<q", int(w))
        assert len(out) == self.meta_size
        return bytes(out)


def compile_options(arch: str) -> dict:
    """``cuda.core.ProgramOptions`` keyword arguments for every emitted kernel.

    NVRTC 13.0 (the H200 image's) treats the generic lambdas inside our kernels as host
    code unless unannotated functions default to device; newer NVRTCs and nvcc don't
    need it, and it changes nothing else (every function we emit is device code).

    >>> compile_options("sm_90")
    {'arch': 'sm_90', 'std': 'c++17', 'device_as_default_execution_space': True}
    """
    return {"arch": arch, "std": "c++17", "device_as_default_execution_space": True}


def emit_step(plan: Plan, step: Step, arch: str = "sm_90", *, gett_tile: str | None = None) -> CudaStepKernel:
    """The CUDA kernel for ``step`` of ``plan`` (family from ``step.strategy``).

    ``arch`` is the device's: fp32 smallmn and skinny steps take the fp64 tensor cores only
    where they run at full rate (``emit_smallmn.fp64_tensor_cores``); otherwise the source
    does not depend on it (the runtime compiles for it). ``gett_tile`` forces one of
    ``GETT_TILES`` (the SIMT kernel, even where tensor cores apply) or of
    ``emit_mma.MMA_TILES`` (tests use it to run the large tiles on small problems), or
    ``"skinny"`` (emit_skinny.py) for a step with a small N or M group, ``"smallmn"``
    (emit_smallmn.py) for a step whose whole output is small, or ``"stream"``
    (emit_stream.py) for a short-K step whose output is the traffic.
    """
    dtypes = [np.dtype(plan.buffers[step.result].dtype)] + [np.dtype(plan.buffers[o].dtype)
                                                            for o in step.operands]
    compute = np.dtype(step.compute)
    if step.strategy == "gett" and _gett_applies(step, dtypes, compute):
        from .emit_skinny import TILE as SKINNY, emit_skinny, skinny_layout
        planned = next((x[1] for x in step.config if isinstance(x, tuple) and len(x) == 2 and x[0] == "tile"), None)
        from .emit_smallmn import TILE as SMALLMN, emit_smallmn, smallmn_layout
        # a planned smallmn step may write partial tiles for a later step: always honoured
        if SMALLMN in (planned, gett_tile) and smallmn_layout(step, 0) is not None:
            return emit_smallmn(step, dtypes, compute, arch=arch)
        if (gett_tile or planned) == SKINNY and skinny_layout(step, 1) is not None:
            return emit_skinny(step, dtypes, compute, arch=arch)
        from .emit_stream import TILE as STREAM, emit_stream, stream_applies
        if (gett_tile or planned) == STREAM and stream_applies(step, dtypes, compute):
            return emit_stream(step, dtypes, compute, arch)
        from .emit_mma import MMA_TILES, emit_mma, mma_op
        from .emit_wgmma import WGMMA_TILES, emit_wgmma
        op = None if gett_tile in GETT_TILES else mma_op(step, dtypes, compute, plan.precision)
        if op is not None and arch == "sm_90" and gett_tile not in MMA_TILES:
            k = emit_wgmma(plan, step, dtypes, compute, op, gett_tile)
            if k is not None:
                return k
        if op is not None:
            return emit_mma(plan, step, dtypes, compute, op, None if gett_tile in WGMMA_TILES else gett_tile)
        return _emit_gett(step, dtypes, compute, gett_tile if gett_tile in GETT_TILES else None, arch)
    if step.strategy in ("gett", "reduce"):
        from .emit_permute import emit_permute, permute_sets
        sets = permute_sets(step)  # a copy whose fast runs are many short modes
        if sets is not None:
            return emit_permute(step, dtypes, compute, sets)
        axes = _transpose_axes(step)
        if axes is not None:
            return _emit_transpose(step, dtypes, compute, *axes)
        run = _rows_copy_axis(step)
        if run is not None:
            rows = _emit_copy_rows(step, dtypes, compute, run)
            if arch == "sm_90" and dtypes[0] == dtypes[1] and COPY_TMA[0]:
                from .emit_copy_tma import copy_tma_layout, emit_copy_tma
                lay = copy_tma_layout(step, dtypes[1].itemsize)
                if lay is not None:
                    return emit_copy_tma(step, dtypes, compute, lay, rows)
            return rows
        return _emit_reduce(step, dtypes, compute)
    return _emit_generic(step, dtypes, compute)


# --------------------------------------------------------------------------------------
# shared helpers

def _cuh(name: str) -> str:
    """A kernel file's text, ready to paste (its own #pragma once / #include removed)."""
    lines = (KERNELS / name).read_text().splitlines()
    keep = [l for l in lines if l.strip() != "#pragma once" and not l.startswith('#include "')]
    return "\n".join(keep).strip("\n") + "\n"


def _label(l) -> str:
    return "…" if isinstance(l, EllipsisDim) else str(l)


def _name(family: str, key: tuple, dtypes) -> str:
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:10]
    tags = _STORAGE[dtypes[0].name][1] + "_" + "".join(_STORAGE[d.name][1] for d in dtypes[1:])
    return f"einc_{family}_{tags}_{digest}"


def _types(dtypes, compute):
    """(TOut, TC, TA, [TIn...]) C type names."""
    tc, ta = _COMPUTE[compute.name]
    return _STORAGE[dtypes[0].name][0], tc, ta, [_STORAGE[d.name][0] for d in dtypes[1:]]


def _header(step, family_line, dtypes, compute, modes_line, launch_lines, acc: str = "") -> str:
    """The source's opening comment; ``acc`` names the accumulator where it is not the compute's."""
    tout, tc, ta, tin = _types(dtypes, compute)
    ta = acc or ta
    lines = [
        "// einc generated kernel (one self-contained translation unit: NVRTC or nvcc -c)",
        f"// step:     {step.text or '(unnamed)'}",
        f"// strategy: {family_line}",
        f"// modes:    {modes_line}",
        f"// dtypes:   result {dtypes[0].name} <- " + ", ".join(d.name for d in dtypes[1:])
        + f"; compute {compute.name} (accumulated as {ta})",
    ]
    lines += [f"// {l}" for l in launch_lines]
    lines.append("// Sizes and strides are run-time metadata (passed by value): this source is the")
    lines.append("// same for every step of this structure.")
    return "\n".join(lines) + "\n"


def tma_arch(arch: str) -> bool:
    """Whether ``arch`` ("sm_90", "sm_90a", ...) has the TMA unit (bulk tensor copies): sm_90 on."""
    return int(arch.split("_")[1].rstrip("a")) >= 90


def _assemble(header: str, files, spec: str) -> str:
    parts = [header]
    # cp.async's L2 prefetch size (common.cuh, EINC_L2_HINT): 128 bytes for every family.
    # SIMT (session 12f, same run): abk 0.149-0.153 -> 0.109-0.110 ms, cabk 0.156-0.168 ->
    # 0.131, 72^5 0.166-0.171 -> 0.157-0.159 (256 bytes less); tensor-core (session 13a, bf16):
    # skinny_mma abk 0.077-0.085 -> 0.064-0.068, cabk -8%, akb -5%, wgmma s3 ap,srqp -4%,
    # the rest within noise. EINC_L2_PREFETCH=0 | 64 | 128 | 256 sets it.
    l2 = os.environ.get("EINC_L2_PREFETCH", "128")
    if l2 in ("64", "128", "256"):
        parts.append(f'#define EINC_L2_HINT ".L2::{l2}B"\n')
    for f in files:
        parts.append(f"\n// ---------------- kernels/{f} ----------------\n")
        parts.append(_cuh(f))
    parts.append("\n// ---------------- specialisation ----------------\n")
    parts.append(spec)
    return "".join(parts)


def _params(n_in: int) -> str:
    return ", ".join(["void* out"] + [f"const void* in{i}" for i in range(n_in)])


def _pow2_at_least(n: int, lo: int) -> int:
    r = lo
    while r < n:
        r *= 2
    return r


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# --------------------------------------------------------------------------------------
# generic and reduce: loop nests over modes

def _loop_modes(step: Step, merge: bool):
    """(free, summed) lists of (extent, strides-per-tensor), ordered for the kernels.

    Free modes: the output's largest stride first, so the last (fastest-decoded) one is
    the output's unit-stride mode and adjacent threads write adjacent elements. Summed
    modes: largest input stride first, so the innermost loop walks the inputs' smallest
    stride. With ``merge``, neighbours that every tensor walks as one are fused.
    """
    nt = len(step.strides)
    col = lambda j: tuple(step.strides[t][j] for t in range(nt))
    free = [j for j, m in enumerate(step.modes) if m.kind not in SUMMED]
    summ = [j for j, m in enumerate(step.modes) if m.kind in SUMMED]
    free.sort(key=lambda j: -abs(step.strides[0][j]))

    def in_key(j):
        s = [abs(step.strides[t][j]) for t in range(1, nt) if step.strides[t][j] != 0]
        return (-(min(s) if s else 0), sum(x == 1 for x in s))
    summ.sort(key=in_key)
    free = [(step.modes[j].extent, col(j)) for j in free]
    summ = [(step.modes[j].extent, col(j)) for j in summ]
    if merge:
        free, summ = _merge(free), _merge(summ)
    return free, summ


def _merge(modes):
    out = []
    for ext, st in modes:
        if out:
            pe, ps = out[-1]
            if all(a == b * ext for a, b in zip(ps, st)):
                out[-1] = (pe * ext, st)
                continue
        out.append((ext, st))
    return out


def _loop_words(nt, rank, free, outer, inner, team):
    """EincLoopMeta<rank, nt> as 8-byte words (see common.cuh for the field order)."""
    total = int(np.prod([e for e, _ in free], dtype=np.int64)) if free else 1
    outer_total = int(np.prod([e for e, _ in outer], dtype=np.int64)) if outer else 1
    inner_ext, inner_st = inner if inner is not None else (1, (0,) * nt)
    words = [total, team, len(free), len(outer), outer_total, inner_ext, *inner_st]
    for group in (free, outer):
        ext = [e for e, _ in group] + [1] * (rank - len(group))
        words += ext
        for t in range(nt):
            words += [st[t] for _, st in group] + [0] * (rank - len(group))
    return words, total


def _modes_line(step: Step) -> str:
    return "  ".join(f"{_label(m.label)}:{m.kind}" for m in step.modes) or "(none: a scalar copy)"


def _emit_generic(step: Step, dtypes, compute) -> CudaStepKernel:
    nt = len(dtypes)
    free, summ = _loop_modes(step, merge=False)
    inner = summ[-1] if summ else None
    outer = summ[:-1]
    rank = _pow2_at_least(max(len(free), len(outer)), 8)
    words, total = _loop_words(nt, rank, free, outer, inner, 1)
    tout, tc, ta, tin = _types(dtypes, compute)
    key = (VERSION, "generic", rank, nt, dtypes[0].name, compute.name, tuple(d.name for d in dtypes[1:]))
    name = _name("generic", key, dtypes)
    block = 256
    grid = max(1, min(_cdiv(total, block), GRID_CAP))
    targs = ", ".join([str(rank), str(nt), tout, tc, ta, *tin])
    ins = ", ".join(f"in{i}" for i in range(nt - 1))
    # An explicit blocks-per-SM bound: with the thread bound alone ptxas may pick a tiny
    # register budget and spill.
    minb = 4 if _ACC_SIZE[ta] <= 8 else 2
    spec = (f"extern \"C\" __global__ void __launch_bounds__({block}, {minb})\n"
            f"{name}({_params(nt - 1)}, const EincLoopMeta<{rank}, {nt}> meta) {{\n"
            f"  const void* in[{nt - 1}] = {{{ins}}};\n"
            f"  einc_generic<{targs}>(out, in, meta);\n}}\n")
    header = _header(step, f"generic (one thread per output element; MAX_RANK {rank} free and {rank} summed modes)",
                     dtypes, compute, _modes_line(step),
                     [f"launch:   1-D grid of {block}-thread blocks, one thread per output, grid-stride "
                      f"(grid capped at {GRID_CAP}); no shared memory",
                      f"metadata: EincLoopMeta<{rank}, {nt}>, {8 * len(words)} bytes"])
    source = _assemble(header, ["common.cuh", "generic.cuh"], spec)
    return CudaStepKernel(name, source, key, (grid, 1, 1), (block, 1, 1), 0, (), 8 * len(words),
                          tuple(words))


def _unroll(n_in: int) -> int:
    return 4 if n_in <= 2 else 2 if n_in <= 4 else 1


def _emit_reduce(step: Step, dtypes, compute) -> CudaStepKernel:
    nt, n_in = len(dtypes), len(dtypes) - 1
    free, summ = _loop_modes(step, merge=True)
    inner = summ[-1] if summ else None
    outer = summ[:-1]
    # rows: the inputs' unit-stride mode is the summed inner loop and not the output's
    # fastest mode (or the output is a scalar): a team of threads per output.
    rows = inner is not None and (
        not free
        or (any(abs(s) == 1 for s in inner[1][1:])
            and not any(abs(s) == 1 for s in free[-1][1][1:])))
    rank = _pow2_at_least(max(len(free), len(outer), 1), 4)
    tout, tc, ta, tin = _types(dtypes, compute)
    U = _unroll(n_in)
    ins = ", ".join(f"in{i}" for i in range(n_in))
    if rows:
        unit = all(s == 1 for s in inner[1][1:])
        max_size = max(d.itemsize for d in dtypes[1:])
        ve = max(1, 16 // max_size) if unit else 1
        total = int(np.prod([e for e, _ in free], dtype=np.int64)) if free else 1
        team = min(32, _pow2_at_least(_cdiv(max(inner[0], 1), ve * U), 1))
        while team < 256 and total * team < sm_count() * 2048 and inner[0] >= team * 2 * ve * U:
            team *= 2
        block = 256
        words, total = _loop_words(nt, rank, free, outer, inner, team)
        grid = max(1, min(_cdiv(total, block // team), GRID_CAP))
        minb = 2  # 128 registers: U vector loads per input in flight
        key = (VERSION, "reduce_rows", rank, nt, U, unit, dtypes[0].name, compute.name,
               tuple(d.name for d in dtypes[1:]))
        name = _name("reduce_rows", key, dtypes)
        targs = ", ".join([str(rank), str(nt), str(U), "true" if unit else "false", tout, tc, ta, *tin])
        call = f"einc_reduce_rows<{targs}>(out, in, meta);"
        family = (f"reduce, rows: a team of threads per output sums the inner (unit-stride) mode "
                  f"{'with 16-byte vector loads' if unit and ve > 1 else 'with coalesced scalar loads'}, "
                  f"{U} accumulators per lane; xor-shuffle + shared-memory team reduction")
        launch = [f"launch:   1-D grid of 256-thread blocks holding 256/team teams "
                  f"(team = meta.team, a power of two <= 256), block-strided over outputs "
                  f"(grid capped at {GRID_CAP}); static shared memory only"]
    else:
        block = 256
        total = int(np.prod([e for e, _ in free], dtype=np.int64)) if free else 1
        n_inner = inner[0] if inner is not None else 1
        # Split each sum over S slices of the block only when the outputs alone cannot
        # fill the GPU (a short, wide column sum), keeping >= 2*U terms per slice.
        split = 1
        while split < 32 and total * split < sm_count() * 2048 and n_inner >= split * 4 * U:
            split *= 2
        words, total = _loop_words(nt, rank, free, outer, inner, split)
        grid = max(1, min(_cdiv(total, block // split), GRID_CAP))
        minb = 3 if _ACC_SIZE[ta] <= 8 and n_in <= 2 else 2
        key = (VERSION, "reduce_cols", rank, nt, U, dtypes[0].name, compute.name,
               tuple(d.name for d in dtypes[1:]))
        name = _name("reduce_cols", key, dtypes)
        targs = ", ".join([str(rank), str(nt), str(U), tout, tc, ta, *tin])
        call = f"einc_reduce_cols<{targs}>(out, in, meta);"
        family = (f"reduce, columns: adjacent threads own outputs adjacent along the output's "
                  f"unit-stride mode, serial sum unrolled x{U}, split over meta.team slices "
                  f"when outputs are few")
        launch = [f"launch:   1-D grid of {block}-thread blocks = team slices x 256/team outputs, "
                  f"block-strided over outputs (grid capped at {GRID_CAP}); static shared memory "
                  f"only when team > 1"]
    launch.append(f"metadata: EincLoopMeta<{rank}, {nt}>, {8 * len(words)} bytes")
    spec = (f"extern \"C\" __global__ void __launch_bounds__({block}, {minb})\n"
            f"{name}({_params(n_in)}, const EincLoopMeta<{rank}, {nt}> meta) {{\n"
            f"  const void* in[{n_in}] = {{{ins}}};\n"
            f"  {call}\n}}\n")
    header = _header(step, family, dtypes, compute, _modes_line(step), launch)
    source = _assemble(header, ["common.cuh", "reduce.cuh"], spec)
    return CudaStepKernel(name, source, key, (grid, 1, 1), (block, 1, 1), 0, (), 8 * len(words),
                          tuple(words))


# --------------------------------------------------------------------------------------
# transpose: a copy whose input and output have different unit-stride modes

def _copy_units(step: Step):
    """(j_in, j_out): the single unit-stride mode (extent > 1) of the input and of the
    output when the step is a pure copy with no negative stride, else None."""
    if len(step.operands) != 1 or any(m.kind in SUMMED for m in step.modes):
        return None
    if any(s < 0 for row in step.strides for s in row):
        return None
    unit = lambda t: [j for j, m in enumerate(step.modes) if step.strides[t][j] == 1 and m.extent > 1]
    ji, jo = unit(1), unit(0)
    return (ji[0], jo[0]) if len(ji) == 1 and len(jo) == 1 else None


def _transpose_axes(step: Step):
    """(j_in, j_out): the modes that are unit-stride in the input and in the output, when
    the step is a pure copy that transposes them; else None."""
    units = _copy_units(step)
    if units is None or units[0] == units[1]:
        return None
    ji, jo = [units[0]], [units[1]]
    if max(step.strides[1][jo[0]], step.strides[0][ji[0]]) * 128 + 128 >= 2 ** 31:
        return None  # the kernel's in-tile offsets are 32-bit (a tile side is at most 128)
    return ji[0], jo[0]


# blocks per SM the launch bounds ask for, by the staged element's bytes (<= 64 registers
# for 1-4 bytes; int64/complex128 spilled at 64)
TRANSPOSE_BLOCKS = {1: 4, 2: 4, 4: 4, 8: 2, 16: 2}
TRANSPOSE_SMEM = 40 * 1024  # static shared memory a transpose tile may take (48 KB at most)
# tile sides: a fixed menu (the kernel's source depends on the size class, not the sizes)
TRANSPOSE_SIDES = (32, 48, 64, 80, 96, 112, 128)


def _vector_width(item: int, extent: int, strides) -> int:
    """Elements per vector along a run: the widest power of two of at most 16 bytes that
    divides the run's extent and every other stride of that tensor (so that each vector
    starts aligned wherever the base pointer is; the kernel checks the pointer)."""
    v = max(1, 16 // item)
    while v > 1 and (extent % v or any(s % v for s in strides)):
        v //= 2
    return v


def _transpose_tile(n_i: int, n_o: int, vi: int, vo: int, item: int) -> tuple:
    """(TI, TO): the tile whose padded area over the two modes is least (ties: the larger
    tile), each side from TRANSPOSE_SIDES and a multiple of its vector, its stage (TI rows
    of TO | 1) within TRANSPOSE_SMEM. Modes of 96 and 84 take one 96 x 96 tile: bf16
    njmi->jinm on 64 x 64 tiles left half the threads idle (96 x 84 of 128 x 128)."""
    def sides(n, v):
        return [t for t in TRANSPOSE_SIDES if t % v == 0]
    best = None
    for ti in sides(n_i, vi):
        for to in sides(n_o, vo):
            if ti * (to | 1) * item > TRANSPOSE_SMEM:
                continue
            area = _cdiv(n_i, ti) * ti * _cdiv(n_o, to) * to
            key = (area, -ti * to)
            if best is None or key < best[0]:
                best = (key, (ti, to))
    return best[1] if best else (32, 32)


def _copy_meta(step: Step, ji: int, jo: int, ti: int, to: int):
    """EincPermMeta's words for a copy with run modes ji (input) and jo (output; the same
    for a rows copy), the other modes as batch modes output-major and merged."""
    run = {ji, jo}
    batch = [(m.extent, (step.strides[0][j], step.strides[1][j])) for j, m in enumerate(step.modes)
             if j not in run]
    batch.sort(key=lambda x: -x[1][0])  # output-major: consecutive tiles write nearby
    batch = _merge(batch)
    rank = _pow2_at_least(max(len(batch), 1), 4)
    n_i, n_o = step.modes[ji].extent, step.modes[jo].extent
    tiles_i, tiles_o = _cdiv(n_i, ti), _cdiv(n_o, to)
    nb = int(np.prod([e for e, _ in batch], dtype=np.int64)) if batch else 1
    ext = [e for e, _ in batch] + [1] * (rank - len(batch))
    words = [n_i, n_o, step.strides[1][jo], step.strides[0][ji], tiles_i, tiles_o, nb, len(batch), *ext,
             *([s[1] for _, s in batch] + [0] * (rank - len(batch))),
             *([s[0] for _, s in batch] + [0] * (rank - len(batch)))]
    return rank, batch, nb, words


def _emit_transpose(step: Step, dtypes, compute, ji: int, jo: int) -> CudaStepKernel:
    raw = dtypes[0] == dtypes[1]  # a pure move: the input's bits, in vectors where they fit
    item = (dtypes[1] if raw else np.dtype(compute)).itemsize
    others = lambda t, skip: [step.strides[t][j] for j, m in enumerate(step.modes) if j != skip and m.extent > 1]
    n_i, n_o = step.modes[ji].extent, step.modes[jo].extent
    vi = _vector_width(item, n_i, others(1, ji)) if raw else 1
    vo = _vector_width(item, n_o, others(0, jo)) if raw else 1
    ti, to = _transpose_tile(n_i, n_o, vi, vo, item)
    rank, batch, nb, words = _copy_meta(step, ji, jo, ti, to)
    tout, tc, _, tin = _types(dtypes, compute)
    key = (VERSION, "transpose", rank, dtypes[0].name, compute.name, dtypes[1].name, ti, to, vi, vo)
    name = _name("transpose", key, dtypes)
    spec = (f"extern \"C\" __global__ void __launch_bounds__(256, {TRANSPOSE_BLOCKS[item]})\n"
            f"{name}(void* out, const void* in0, const EincPermMeta<{rank}> meta) {{\n"
            f"  einc_transpose<{rank}, {tout}, {tc}, {tin[0]}, {ti}, {to}, {vi}, {vo}, "
            f"{'true' if raw else 'false'}>(out, in0, meta);\n}}\n")
    vec = f"vectors of {vi} (in) and {vo} (out) elements where the pointers align" if vi * vo > 1 else "elements"
    header = _header(step, f"transpose ({ti}x{to} tiles through shared memory: reads along the input's "
                     f"unit-stride mode, writes along the output's; {vec})", dtypes, compute, _modes_line(step),
                     [f"launch:   1-D grid of 256-thread blocks, one {ti}x{to} tile at a time, "
                      f"grid-stride (grid capped at {GRID_CAP}); static shared memory",
                      f"metadata: EincPermMeta<{rank}>, {8 * len(words)} bytes"])
    source = _assemble(header, ["common.cuh", "transpose.cuh"], spec)
    grid = max(1, min(nb * words[4] * words[5], GRID_CAP))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (256, 1, 1), 0, (), 8 * len(words), tuple(words))


# rows copies by the TMA unit on sm_90 (emit_copy_tma.py); EINC_COPY_TMA=0: the SIMT rows copy
COPY_TMA = [os.environ.get("EINC_COPY_TMA", "1") != "0"]
ROWS_COPY_MIN_RUN = 16  # shared unit-stride run (elements) from which a reordering copy moves whole rows


def _rows_copy_axis(step: Step):
    """The mode both sides of a pure copy are unit-stride along, when its other modes are
    reordered (a GEMM-order copy such as lnim->linm: reduce_cols moved it at 0.27 TB/s)
    and the run is at least ROWS_COPY_MIN_RUN; else None."""
    units = _copy_units(step)
    if units is None or units[0] != units[1] or step.modes[units[0]].extent < ROWS_COPY_MIN_RUN:
        return None
    if any(s == 0 for row in step.strides for s, m in zip(row, step.modes) if m.extent > 1):
        return None
    j = units[0]
    rest = sorted(((m.extent, (step.strides[0][q], step.strides[1][q])) for q, m in enumerate(step.modes)
                   if q != j and m.extent > 1), key=lambda x: -x[1][0])
    if len(_merge(rest)) < 2:
        return None  # rows in the same order both sides: a plain (strided) copy
    return j


def _emit_copy_rows(step: Step, dtypes, compute, j: int) -> CudaStepKernel:
    raw = dtypes[0] == dtypes[1]
    item = (dtypes[1] if raw else np.dtype(compute)).itemsize
    others = [step.strides[t][q] for t in (0, 1) for q, m in enumerate(step.modes) if q != j and m.extent > 1]
    v = _vector_width(item, step.modes[j].extent, others) if raw else 1
    rank, batch, nb, words = _copy_meta(step, j, j, 1, 1)
    tout, tc, _, tin = _types(dtypes, compute)
    key = (VERSION, "copy_rows", rank, dtypes[0].name, compute.name, dtypes[1].name, v)
    name = _name("copy_rows", key, dtypes)
    spec = (f"extern \"C\" __global__ void __launch_bounds__(256)\n"
            f"{name}(void* out, const void* in0, const EincPermMeta<{rank}> meta) {{\n"
            f"  einc_copy_rows<{rank}, {tout}, {tc}, {tin[0]}, {v}, {'true' if raw else 'false'}>(out, in0, meta);\n}}\n")
    header = _header(step, f"copy_rows (rows of the shared unit-stride mode moved whole, "
                     f"{f'{v}-element vectors where the pointers align' if v > 1 else 'element by element'}; "
                     "the other modes' offsets decoded per row)", dtypes, compute, _modes_line(step),
                     ["launch:   1-D grid of 256-thread blocks, grid-stride over the vectors",
                      f"metadata: EincPermMeta<{rank}>, {8 * len(words)} bytes"])
    source = _assemble(header, ["common.cuh", "transpose.cuh"], spec)
    grid = max(1, min(_cdiv(nb * _cdiv(step.modes[j].extent, v), 256 * 4), sm_count() * 16, GRID_CAP))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (256, 1, 1), 0, (), 8 * len(words), tuple(words))


# --------------------------------------------------------------------------------------
# gett: batched GEMM over mode groups

_INVOLVED = {"batch": (0, 1, 2), "m": (0, 1), "n": (0, 2), "k": (1, 2)}


def _gett_applies(step: Step, dtypes, compute) -> bool:
    kinds = {m.kind for m in step.modes}
    K = int(np.prod([m.extent for m in step.modes if m.kind == "k"], dtype=np.int64))
    return (len(step.operands) == 2 and {"m", "n", "k"} <= kinds and "sum" not in kinds
            and compute.kind in "iuf" and all(kind(d) in "iuf" for d in dtypes[1:])
            and K < 2 ** 34)  # the kernel counts K slices in 32 bits


def _has_unit(modes, t) -> bool:
    """Whether tensor t's unit-stride mode is among ``modes`` (a structural fact)."""
    return any(abs(st[t]) == 1 for _, st in modes)


C_LEAD_RATIO = 4  # output elements per input element above which M and N follow C's strides


def _gett_groups(step: Step):
    """group -> list of (extent, (sC, sA, sB)): ordered, then merged where contiguous.

    Each group is ordered by the strides of the tensor whose loads walk it (A along M, B
    along N, along K the operand whose unit-stride mode lies there, C along batch),
    largest first and broadcast (0) before everything, so that tensor's unit-stride mode
    is the group's last, fastest one. When the output is much bigger than the inputs (a
    short K, e.g. ccsd_t's K = 24), M and N follow C's strides instead: the stores are
    the traffic, and the few input panels gather through their tables from L2. Only which
    group holds a unit-stride mode decides the kernel's variant, never the sizes.
    """
    raw = {g: [(m.extent, tuple(step.strides[t][j] for t in range(3)))
               for j, m in enumerate(step.modes) if m.kind == g] for g in _INVOLVED}
    k_lead = (2, 1) if _has_unit(raw["k"], 2) and not _has_unit(raw["k"], 1) else (1, 2)
    size = lambda *gs: int(np.prod([e for g in gs for e, _ in raw[g]], dtype=np.int64))
    c_size, ab_size = size("batch", "m", "n"), size("batch", "m", "k") + size("batch", "k", "n")
    if c_size >= C_LEAD_RATIO * ab_size:  # the output's traffic dominates: store coalesced
        lead = {"batch": (0, 1, 2), "m": (0, 1), "n": (0, 2), "k": k_lead}
    else:
        lead = {"batch": (0, 1, 2), "m": (1, 0), "n": (2, 0), "k": k_lead}
    mag = lambda s: abs(s) if s else float("inf")
    return {g: _merge(sorted(modes, key=lambda x: tuple(-mag(x[1][t]) for t in lead[g])))
            for g, modes in raw.items()}


def _group_offsets(modes, t) -> np.ndarray:
    return offset_table([e for e, _ in modes], [st[t] for _, st in modes])


@dataclass(frozen=True)
class GettLayout:
    """A gett step seen as C[b, m, n] = sum_k A[b, m, k] B[b, k, n]: groups and metadata.

    ``G`` maps b/m/n/k to the group's (extent, (sC, sA, sB)) modes after the swap
    (``swapped``: C is unit-stride along M, so the kernel computes C^T = B^T A^T and
    ``ta``/``tb`` index the step's tensors that act as A and B). ``words``/``tables`` are
    EincGettMeta's fields, shared by the SIMT (gett) and tensor-core (mma) kernels.
    """

    G: dict
    swapped: bool
    ta: int
    tb: int
    tabled: dict
    ext: dict
    words: tuple
    tables: tuple

    def modes_line(self, step: Step) -> str:
        labels = {}
        for m in step.modes:
            labels.setdefault(m.kind, []).append(_label(m.label))
        return (f"batch {' '.join(labels.get('batch', [])) or '-'} | m {' '.join(labels.get('m', []))} | "
                f"n {' '.join(labels.get('n', []))} | k {' '.join(labels.get('k', []))}")

    def gdesc(self, g) -> str:
        if not self.G[g]:
            return "-"
        n = len(self.G[g])
        return ("table" if self.tabled[g] else "stride") + f"[{n} mode{'s' if n > 1 else ''}]"

    def tiles(self, bm: int, bn: int) -> tuple:
        """(tiles_m, tiles_n) for a bm x bn tile; the metadata's tile counts follow."""
        return _cdiv(self.ext["m"], bm), _cdiv(self.ext["n"], bn)


C_N_WORD = 14  # EincGettMeta.c_n's position in GettLayout.words


def gett_layout(step: Step, bm: int, bn: int, metadata: bool = True) -> GettLayout:
    """The step's GettLayout; ``metadata=False`` leaves ``words``/``tables`` empty: the
    groups, swap and extents alone, for decisions made while planning (a tensor network's
    offset tables run to 2**27 entries, built only when the kernel is emitted)."""
    groups = _gett_groups(step)
    # Store C fastest along the kernel's N: if C is unit-stride along M instead, compute
    # C^T = B^T A^T by swapping the operands and the M/N groups.
    swapped = _has_unit(groups["m"], 0) and not _has_unit(groups["n"], 0)
    ta_idx, tb_idx = (2, 1) if swapped else (1, 2)
    gm, gn = ("n", "m") if swapped else ("m", "n")
    G = {"b": groups["batch"], "m": groups[gm], "n": groups[gn], "k": groups["k"]}
    ext = {g: int(np.prod([e for e, _ in G[g]], dtype=np.int64)) if G[g] else 1 for g in G}
    tabled = {g: len(G[g]) > 1 for g in G}
    if not metadata:
        return GettLayout(G, swapped, ta_idx, tb_idx, tabled, ext, (), ())
    # metadata: sizes, strides of single-mode groups, then table slots
    tables, words = [], [ext["m"], ext["n"], ext["k"], ext["b"], _cdiv(ext["m"], bm), _cdiv(ext["n"], bn)]
    slots = [("b", ta_idx), ("m", ta_idx), ("k", ta_idx), ("b", tb_idx), ("k", tb_idx), ("n", tb_idx),
             ("b", 0), ("m", 0), ("n", 0)]
    assert 6 + slots.index(("n", 0)) == C_N_WORD
    for g, t in slots:
        words.append(0 if tabled[g] or not G[g] else G[g][0][1][t])
    for g, t in slots:
        if tabled[g]:
            words.append(("table", len(tables)))
            tables.append(_group_offsets(G[g], t))
        else:
            words.append(0)
    return GettLayout(G, swapped, ta_idx, tb_idx, tabled, ext, tuple(words), tuple(tables))


def _switch(name: str, default: bool) -> bool:
    """An A/B switch of the gett kernel's variants: environment ``name`` = 1 or 0.

    >>> _switch("EINC_GETT_NO_SUCH_SWITCH", True)
    True
    """
    v = os.environ.get(name)
    return default if v is None else v == "1"


GETT_LANES = {"rows": 0, "pairs": 1, "warps": 2, "warp-pairs": 3}


def _lanes() -> int:
    """The gett kernel's lane order (gett.cuh, LANES): ``EINC_GETT_LANES`` = rows, pairs,
    warps (4 x 8 warp tiles) or warp-pairs. Pairs by default: on the H200 it took the fp32
    4096^3 GEMM from 0.82x to 0.86x cuBLAS (benchmarks/NOTES.md, session 6).

    >>> _lanes()
    1
    """
    v = os.environ.get("EINC_GETT_LANES", "pairs")
    if v not in GETT_LANES:
        raise EincError(f"EINC_GETT_LANES={v!r}: expected one of {', '.join(GETT_LANES)}")
    return GETT_LANES[v]


def _kvec(k_modes, t) -> bool:
    """Whether tensor t's innermost K mode is unit-stride, so that a thread's run of K
    indices is contiguous in t (unless it crosses that mode's extent, which the kernel
    checks). ``EINC_GETT_KVEC=0`` turns the vector runs off (A/B measurements).

    >>> _kvec([(8, (0, 8, 1)), (4, (0, 1, 32))], 2), _kvec([(8, (0, 8, 1)), (4, (0, 1, 32))], 1)
    (False, True)
    """
    return bool(k_modes) and k_modes[-1][1][t] == 1 and _switch("EINC_GETT_KVEC", True)


def _kvec_operands(lay: GettLayout, kvec: bool) -> tuple:
    """(A, B) load K-fast vector runs: not M-fast (N-fast) and K's innermost mode unit-stride."""
    G, ta, tb = lay.G, lay.ta, lay.tb
    return (kvec and not _has_unit(G["m"], ta) and _kvec(G["k"], ta),
            kvec and not _has_unit(G["n"], tb) and _kvec(G["k"], tb))


def _async_ok(dtypes, compute) -> bool:
    """cp.async moves raw bits: only when the inputs already are the compute type (fp32,
    fp64, int32, int64); other inputs are converted in registers."""
    return compute.name in ("float32", "float64", "int32", "int64") and all(d == compute for d in dtypes[1:])


def big_tile(step: Step, dtypes, compute, cfg: str, forced: bool = False, arch: str = "sm_90") -> str:
    """The 128x128 tile's K slice: 128x128x8 becomes 128x128x16 where the 16-k tile
    applies (raw 4-byte copies; at most one operand with K-fast vector runs, whose runs of 8
    go through 4 registers in two parts) and pays (K >= 128: on the H200 it took the
    4096^3 GEMM from 0.89 to 0.91x cuBLAS and ccsd lki,kjl->ji from 0.79 to 0.94x
    torch.einsum, but ccsd_t's K = 24 from 0.85 to 0.77x: padded to 32, one slice fewer
    to overlap). fp32 steps with K >= 128 on a GPU with full-rate fp64 tensor cores (``arch``)
    take a DM tile instead (DM_DEFAULT, DM_TABLED_K where K is tabled, DM_A_MFAST where A
    alone is M-fast; ``EINC_GETT_DM=0``
    keeps the rule's SIMT tile). A tile the caller forced is kept where it applies.
    ``EINC_GETT_BIG_TILE`` = one of BIG_TILES overrides the rule (A/B measurements).

    >>> import einc.api
    >>> p = einc.api.plan_for("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float32", backend="cuda")
    >>> d = [np.dtype("float32")] * 3
    >>> big_tile(p.steps[0], d, d[0], "128x128x8"), big_tile(p.steps[0], d, d[0], "128x128x8", arch="sm_80")
    ('64x128x16d', '128x128x16')
    >>> big_tile(p.steps[0], d[:1] + [np.dtype("float64")] * 2, np.dtype("float64"), "128x128x16")
    '128x128x8'
    """
    if cfg not in BIG_TILES:
        return cfg
    env = os.environ.get("EINC_GETT_BIG_TILE", "auto")
    if env not in ("auto", *BIG_TILES):
        raise EincError(f"EINC_GETT_BIG_TILE={env!r}: expected auto or one of {', '.join(BIG_TILES)}")
    from .emit_smallmn import dmma_applies
    lay = gett_layout(step, 128, 128, metadata=False)
    dm = dmma_applies(dtypes, compute, arch)
    if not _async_ok(dtypes, compute) or compute.itemsize != 4:
        return "128x128x8"
    rule = "128x128x16" if lay.ext["k"] >= 128 else "128x128x8"
    # fp32 on a GPU with full-rate fp64 tensor cores: a DM tile where K is long (H200, session
    # 21: 4096^3 2.60 ms against 128x128x16's 3.00, TCCG ccsd GEMMs 1.1-1.2x faster); 128x64
    # where K is tabled (split-K steps, ccsd kmli,ljm: lki,kjl 1.018 against 64x128's 1.050 and
    # SIMT's 1.115 ms, kmli,ljm 0.477 / 0.511 / 0.483)
    # where A alone is M-fast (its slice's rows run along M, B's along K), 128 of M a tile: its
    # copies run 512 bytes a k-row, not 256 (H100, session 31, interleaved A/B, ms against
    # 64x128x16d: njmi,kmln 17.32 / 17.93, njmi,mknl 17.18 / 17.86, ji,kj->ik 4096^3 2.541 /
    # 2.639; where B is N-fast 64x128 stays: ki,jk 4096^3 2.59 / 2.70, lki,jl 0.921 / 0.922;
    # both fast, kli,lj 0.909 / 0.919, is left at the default)
    if dm and lay.ext["k"] >= 128 and _switch("EINC_GETT_DM", True):
        a_mfast, b_nfast = _has_unit(lay.G["m"], lay.ta), _has_unit(lay.G["n"], lay.tb)
        rule = DM_TABLED_K if lay.tabled["k"] else DM_A_MFAST if a_mfast and not b_nfast else DM_DEFAULT
    # a planned DM tile (`einc tune` measured it) is kept like a forced one where the fp64
    # tensor cores apply (else, e.g. int32 or a GPU before sm_90, the K rule's SIMT tile)
    pick = env if env != "auto" else cfg if forced or cfg in DM_TILES else rule
    if pick in DM_TILES and not dm:
        pick = rule
    if pick not in DM_TILES and all(_kvec_operands(lay, True)):  # both K-fast: 16-k slices would
        return "128x128x8"                                            # hold 8 live registers a run
    return pick


def _emit_gett(step: Step, dtypes, compute, tile=None, arch: str = "sm_90") -> CudaStepKernel:
    ext0 = {g: int(np.prod([m.extent for m in step.modes if m.kind == g], dtype=np.int64))
            for g in ("batch", "m", "n")}
    # The plan's tile (cost model or `einc tune`, in step.config); without one, the big
    # tile once it fills every SM, otherwise more, smaller tiles.
    planned = next((x[1] for x in step.config if isinstance(x, tuple) and len(x) == 2 and x[0] == "tile"
                    and x[1] in GETT_TILES), None)
    cfg = tile or planned or ("128x128x8" if ext0["batch"] * _cdiv(ext0["m"], 128) * _cdiv(ext0["n"], 128)
                              >= sm_count() else "64x64x8")
    cfg = big_tile(step, dtypes, compute, cfg, forced=tile is not None, arch=arch)
    if cfg in NARROW_TILES and not narrow_tile_fits(step, dtypes[1:]):
        cfg = "128x128x8"
    if cfg in DM_TILES:
        from .emit_gett_dm import emit_gett_dm
        return emit_gett_dm(step, dtypes, compute, cfg)
    BM, BN, BK, RM, RN = GETT_TILES[cfg]
    lay = gett_layout(step, BM, BN)
    G, swapped, ta_idx, tb_idx, tabled, ext = lay.G, lay.swapped, lay.ta, lay.tb, lay.tabled, lay.ext
    words, tables = list(lay.words), list(lay.tables)
    # Global loads run along A's M (else K) and B's N (else K), whichever is unit-stride.
    a_mfast = _has_unit(G["m"], ta_idx)
    b_nfast = _has_unit(G["n"], tb_idx)
    tc, ta = _COMPUTE[compute.name]
    acc_size = _ACC_SIZE[ta]
    async_ok = _async_ok(dtypes, compute)

    M, N, K, nb = ext["m"], ext["n"], ext["k"], ext["b"]
    big = max(BM, BN) == 128
    nthreads = (BM // RM) * (BN // RN)
    stages = 2 if (big and acc_size > 4) or not async_ok or BK == 16 else 3
    # K-fast operands whose innermost K mode is unit-stride load runs of k as vectors
    # (whether a run is whole and aligned is checked at run time: a stride fact only);
    # not int64, whose multi-instruction multiply-adds leave no registers for the runs
    # (ptxas: 96 -> 128 registers and 96 bytes of spills on sm_80, 64x64 tiles)
    a_kvec, b_kvec = _kvec_operands(lay, async_ok and ta != "unsigned long long")
    lanes = _lanes()
    TX, warp_tiles = BN // RN, (BN // RN) % 8 == 0 and (nthreads // (BN // RN)) % 4 == 0
    if (lanes == 1 and TX != 16) or (lanes >= 2 and not warp_tiles):  # (96-wide tiles: TX = 12 or 24)
        lanes = 2 if warp_tiles else 0  # pairs need rows of 16 threads, warp tiles 4 x 8; else rows
    # M-fast A / N-fast B whose group's innermost mode is unit-stride copy each thread's
    # run of rows (columns) as one 8-16 byte cp.async (contiguity, edge and alignment are
    # checked at run time); EINC_GETT_MNVEC=0 keeps the 4-byte copies (A/B measurements)
    mnvec = async_ok and _switch("EINC_GETT_MNVEC", True)
    a_mvec = mnvec and a_mfast and G["m"][-1][1][ta_idx] == 1
    b_nvec = mnvec and b_nfast and G["n"][-1][1][tb_idx] == 1
    minb = NARROW_TILES.get(cfg) or (2 if async_ok and acc_size <= 4 or not big else 1)
    tiles_m, tiles_n = lay.tiles(BM, BN)
    tiles = nb * tiles_m * tiles_n

    tout, tcn, tan, tin = _types(dtypes, compute)
    sa, sb = (tin[1], tin[0]) if swapped else (tin[0], tin[1])
    flags = (async_ok, tabled["b"], tabled["m"], tabled["n"], tabled["k"], a_mfast, b_nfast)
    key = (VERSION, "gett", cfg, stages, minb, flags, swapped, dtypes[0].name, compute.name,
           tuple(d.name for d in dtypes[1:]), a_kvec, b_kvec, lanes, a_mvec, b_nvec)
    name = _name("gett", key, dtypes)
    b = lambda x: "true" if x else "false"
    targs = ", ".join([f"EincGettTile<{BM}, {BN}, {BK}, {RM}, {RN}, {stages}>", *map(b, flags), tout, tcn, tan, sa, sb,
                       *map(b, (a_kvec, b_kvec)), str(lanes), *map(b, (a_mvec, b_nvec))])
    a_arg, b_arg = ("in1", "in0") if swapped else ("in0", "in1")
    spec = (f"extern \"C\" __global__ void __launch_bounds__({nthreads}, {minb})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincGettMeta meta) {{\n"
            f"  einc_gett<{targs}>(out, {a_arg}, {b_arg}, meta);\n}}\n")

    gdesc, modes_line = lay.gdesc, lay.modes_line(step)
    per_thread = f"{RM}x{RN} per thread"
    family = (f"gett {cfg} tiles, {per_thread}, {nthreads} threads, "
              f"{f'{stages}-stage cp.async pipeline' if async_ok else 'register prefetch, 2 stages'}; "
              f"groups batch={gdesc('b')} M={gdesc('m')} N={gdesc('n')} K={gdesc('k')}; "
              f"A loads {'M' if a_mfast else 'K'}-fast{' (vector runs)' if a_kvec or a_mvec else ''}, "
              f"B loads {'N' if b_nfast else 'K'}-fast{' (vector runs)' if b_kvec or b_nvec else ''}"
              + ("; operands swapped (C^T = B^T A^T: C is unit-stride along M)" if swapped else ""))
    tiles_txt = f"{BM}x{BN}"
    smem = stages * BK * (BM + BN + 2 * max(1, 16 // acc_size)) * acc_size  # rows padded by 16 bytes
    launch = [f"launch:   1-D grid, one {nthreads}-thread block per {tiles_txt} output tile "
              f"(batch x tile rows x tile columns, grid-stride, capped at 2^31-1); "
              f"{smem} bytes of static shared memory, no dynamic",
              f"metadata: EincGettMeta, {8 * len(words)} bytes; {len(tables)} offset table(s)"]
    header = _header(step, family, dtypes, compute, modes_line, launch)
    source = _assemble(header, ["common.cuh", "gett.cuh"], spec)
    grid = max(1, min(tiles, 2 ** 31 - 1))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (nthreads, 1, 1), 0, tuple(tables),
                          8 * len(words), tuple(words))
