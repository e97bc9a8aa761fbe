"""Tensor-core GEMM steps: the `mma` kernel (kernels/mma.cuh) specialised for one step.

A gett step runs on tensor cores when its inputs are one of the types mma.sync multiplies
exactly as numpy would (after accumulation in fp32/int32): fp16, bf16, int8/uint8 (into a
result of at most 32 bits, where int32 wrap-around equals numpy's), or fp32 when the
caller opted into tf32 (``precision="tf32"``). Everything else about the step (groups,
tables, the swap, the metadata) is shared with the SIMT gett kernel (``gett_layout``).

>>> import einc.api
>>> from einc.codegen.cuda.emit import emit_step
>>> p = einc.api.plan_for("ij,jk->ik", [(256, 128), (128, 64)], "float16", backend="cuda")
>>> k = emit_step(p, p.steps[0], "sm_80")  # (sm_90 takes wgmma)
>>> k.name.startswith("einc_mma_"), "mma.sync" in k.source
(True, True)
"""
from __future__ import annotations

import numpy as np

from ...ir import Plan, Step
from .emit import (sm_count, VERSION, CudaStepKernel, _assemble, _cdiv, _has_unit, _header, _name,
                   _types, gett_layout)

# input dtype -> (instruction struct in mma.cuh, element bytes, what the header says)
_OPS = {
    "float16": ("EincMmaF16", 2, "mma.sync m16n8k16 f16 x f16 -> f32"),
    "bfloat16": ("EincMmaBF16", 2, "mma.sync m16n8k16 bf16 x bf16 -> f32"),
    "float32": ("EincMmaTF32", 4, "mma.sync m16n8k8 tf32 x tf32 -> f32 (precision='tf32')"),
    "int8": ("EincMmaS8", 1, "mma.sync m16n8k32 s8 x s8 -> s32"),
    "uint8": ("EincMmaU8", 1, "mma.sync m16n8k32 u8 x u8 -> s32"),
}
# name -> (BM, BN, WM, WN, stages, bytes of k per slice)
MMA_TILES = {
    "mma128x128": (128, 128, 2, 4, 4, 64),
    "mma128x128k128": (128, 128, 2, 4, 3, 128),
    "mma128x256": (128, 256, 4, 4, 3, 64),
    "mma128x256k128": (128, 256, 4, 4, 2, 128),
    "mma64x64": (64, 64, 2, 2, 4, 64),
}
MIN_WORK = 1 << 21  # multiply-adds below which the SIMT/reduce kernels' shorter setup wins


def mma_op(step: Step, dtypes, compute, precision: str = "highest"):
    """The instruction for ``step`` (an ``_OPS`` key), or None when tensor cores don't apply."""
    if len(dtypes) != 3 or dtypes[1] != dtypes[2]:
        return None
    kinds = {m.kind for m in step.modes}
    if not {"m", "n", "k"} <= kinds or "sum" in kinds:
        return None
    work = int(np.prod([m.extent for m in step.modes], dtype=np.int64))
    K = int(np.prod([m.extent for m in step.modes if m.kind == "k"], dtype=np.int64))
    if work < MIN_WORK or K >= 2 ** 31:
        return None
    name = dtypes[1].name
    if name in ("float16", "bfloat16"):
        return name if compute == np.float32 else None
    if name == "float32":
        return name if precision == "tf32" and compute == np.float32 else None
    if name in ("int8", "uint8"):  # int32 accumulation wraps like numpy only up to 32 bits
        return name if compute.kind in "iu" and compute.itemsize <= 4 else None
    return None


def _vec_ok(groups: dict, fast: str, t: int, ve: int) -> bool:
    """16-byte pieces along group ``fast`` of tensor t: every ``ve`` consecutive indices
    from a multiple of ``ve`` are ``ve`` consecutive elements of t, and every other stride
    of t is a multiple of ``ve`` (so pieces are aligned when the tensor is).

    That holds when the group's innermost mode is unit-stride in t with an extent that is
    a multiple of ``ve``, or when the whole group is one contiguous block of t (its modes
    nest, innermost stride 1) whose total extent is a multiple of ``ve``: a table then
    still gives one piece's first offset and the rest follow."""
    modes = groups[fast]
    if not modes or modes[-1][1][t] != 1:
        return False
    inner = 1 if modes[-1][0] % ve == 0 else len(modes)  # modes the pieces run through
    if inner > 1:
        run = modes[-inner:]
        if any(a[1][t] != b[1][t] * b[0] for a, b in zip(run, run[1:])):
            return False
        if int(np.prod([e for e, _ in run], dtype=np.int64)) % ve:
            return False
    others = [st[t] for g in ("b", "m", "n", "k") for i, (_, st) in enumerate(groups[g])
              if not (g == fast and i >= len(modes) - inner)]
    return all(s % ve == 0 for s in others)


def choose_tile(step: Step) -> str:
    ext = {g: int(np.prod([m.extent for m in step.modes if m.kind == g], dtype=np.int64))
           for g in ("batch", "m", "n")}
    tiles = lambda bm, bn: ext["batch"] * _cdiv(ext["m"], bm) * _cdiv(ext["n"], bn)
    if tiles(128, 256) >= 2 * sm_count():
        return "mma128x256"
    return "mma128x128" if tiles(128, 128) >= sm_count() else "mma64x64"


def smem_bytes(tile: str, e: int, a_kmaj: bool, b_kmaj: bool) -> int:
    bm, bn, _, _, stages, kb = MMA_TILES[tile]
    side = lambda r, kmaj: r * (kb + 16) if kmaj else (kb // e) * (r * e + (32 if e == 4 else 16))
    return stages * (side(bm, a_kmaj) + side(bn, b_kmaj))


def emit_mma(plan: Plan, step: Step, dtypes, compute, op: str, tile: str | None = None,
             vec: bool = True) -> CudaStepKernel:
    """The kernel; when it loads in 16-byte pieces, ``fallback`` is its element-path twin
    for operands that arrive misaligned (``vec=False`` builds that twin)."""
    struct, E, what = _OPS[op]
    cfg = tile or choose_tile(step)
    BM, BN, WM, WN, S, KB = MMA_TILES[cfg]
    nthreads = WM * WN * 32
    lay = gett_layout(step, BM, BN)
    G, ta, tb = lay.G, lay.ta, lay.tb
    # shared-memory layout per operand: MN-major when its unit-stride mode is in M (N);
    # int8 fragments from an MN-major tile would be byte gathers (the register budget
    # goes to addresses), so int8 stays K-major and such an operand loads element-wise
    # (the plan copies it K-major first whenever the GEMM is worth it)
    a_kmaj = E == 1 or not _has_unit(G["m"], ta)
    b_kmaj = E == 1 or not _has_unit(G["n"], tb)
    ve = 16 // E
    vec_a = vec and _vec_ok(G, "k" if a_kmaj else "m", ta, ve)
    vec_b = vec and _vec_ok(G, "k" if b_kmaj else "n", tb, ve)
    smem = smem_bytes(cfg, E, a_kmaj, b_kmaj)
    tiles_m, tiles_n = lay.tiles(BM, BN)
    tiles = lay.ext["b"] * tiles_m * tiles_n

    tout, tcn, tan, _ = _types(dtypes, compute)
    b = lambda x: "true" if x else "false"
    flags = (lay.tabled["b"], lay.tabled["m"], lay.tabled["n"], lay.tabled["k"], a_kmaj, b_kmaj, vec_a, vec_b)
    key = (VERSION, "mma", cfg, struct, flags, lay.swapped, dtypes[0].name, compute.name,
           tuple(d.name for d in dtypes[1:]))
    name = _name("mma", key, dtypes)
    targs = ", ".join([f"EincMmaTile<{BM}, {BN}, {WM}, {WN}, {S}, {KB}>", struct, *map(b, flags), tout, tcn, tan])
    a_arg, b_arg = ("in1", "in0") if lay.swapped else ("in0", "in1")
    # 64 accumulators a thread (32 on 64x64 tiles) + fragments fit 128 registers (2 blocks
    # an SM) for 16-bit types; int8 and tf32 (their extra address and fragment work) and
    # the swapped epilogue spill a few bytes at 128 (ptxas -v), so they get 1 block
    minb = 2 if nthreads <= 256 and E == 2 and not lay.swapped else 1
    spec = (f"extern \"C\" __global__ void __launch_bounds__({nthreads}, {minb})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincGettMeta meta) {{\n"
            f"  einc_mma_gett<{targs}>(out, {a_arg}, {b_arg}, meta);\n}}\n")
    g = lay.gdesc
    load = lambda kmaj, vec, mn: (f"{'K' if kmaj else mn}-major in shared memory, "
                                  f"{'16-byte cp.async' if vec else 'element loads via registers'}")
    family = (f"mma (tensor cores: {what}); {BM}x{BN} tiles, {WM}x{WN} warps of "
              f"{BM // WM}x{BN // WN}, {S}-stage ring of {KB}-byte K slices; groups batch={g('b')} M={g('m')} N={g('n')} "
              f"K={g('k')}; A {load(a_kmaj, vec_a, 'M')}; B {load(b_kmaj, vec_b, 'N')}"
              + ("; operands swapped (C^T = B^T A^T: C is unit-stride along M)" if lay.swapped else ""))
    launch = [f"launch:   1-D grid, one {nthreads}-thread block per {BM}x{BN} output tile "
              f"(grid-stride, capped at 2^31-1); {smem} bytes of dynamic shared memory",
              f"metadata: EincGettMeta, {8 * len(lay.words)} bytes; {len(lay.tables)} offset table(s)"]
    header = _header(step, family, dtypes, compute, lay.modes_line(step), launch)
    source = _assemble(header, ["common.cuh", "gett.cuh", "mma.cuh"], spec)
    grid = max(1, min(tiles, 2 ** 31 - 1))
    # pointer positions: 0 is C; A and B are inputs ta and tb of the step
    aligned = tuple(t for t, v in ((ta, vec_a), (tb, vec_b)) if v)
    fallback = emit_mma(plan, step, dtypes, compute, op, cfg, vec=False) if aligned else None
    return CudaStepKernel(name, source, key, (grid, 1, 1), (nthreads, 1, 1), smem, lay.tables,
                          8 * len(lay.words), lay.words, aligned, fallback)
