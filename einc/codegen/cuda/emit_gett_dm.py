"""The gett family's DM tiles: an fp32 step's products on the fp64 tensor cores
(kernels/gett_dm.cuh). Each operand is staged along whichever group has its unit stride,
every copy a cp.async, and the fragments of the next k8 step are read before the current
step's products, across the slice barrier (the header of gett_dm.cuh)."""

from __future__ import annotations

import numpy as np

from ...ir import Step
from .emit import (DM_TILES, GETT_TILES, VERSION, CudaStepKernel, _assemble, _has_unit, _header, _kvec,
                   _name, _types, gett_layout)


def dm_smem(bm: int, bn: int, bk: int, stages: int, a_mfast: bool, b_nfast: bool) -> int:
    """Dynamic shared memory of a DM tile: S stages of [BK][X + 8] (the fast group is X) or
    [X][BK + 4] floats per operand (gett_dm.cuh's EincDmStage).

    >>> dm_smem(128, 128, 16, 4, True, False)
    75776
    """
    size = lambda x, fast: bk * (x + 8) if fast else x * (bk + 4)
    return 4 * stages * (size(bm, a_mfast) + size(bn, b_nfast))


def emit_gett_dm(step: Step, dtypes, compute, cfg: str) -> CudaStepKernel:
    BM, BN, BK, _, _ = GETT_TILES[cfg]
    stages, minb = DM_TILES[cfg]
    lay = gett_layout(step, BM, BN)
    G, ta, tb, tabled, ext = lay.G, lay.ta, lay.tb, lay.tabled, lay.ext
    a_mfast, b_nfast = _has_unit(G["m"], ta), _has_unit(G["n"], tb)
    # 16-byte runs where the stored-contiguous group's innermost mode is unit-stride
    a_vec = G["m"][-1][1][ta] == 1 if a_mfast else _kvec(G["k"], ta)
    b_vec = G["n"][-1][1][tb] == 1 if b_nfast else _kvec(G["k"], tb)
    nthreads = (BM // 64) * (BN // 32) * 32
    tiles_m, tiles_n = lay.tiles(BM, BN)
    tiles = ext["b"] * tiles_m * tiles_n
    tout, tcn, _, _ = _types(dtypes, compute)
    flags = (tabled["b"], tabled["m"], tabled["n"], tabled["k"], a_mfast, b_nfast)
    key = (VERSION, "gett", cfg, stages, minb, flags, lay.swapped, dtypes[0].name, compute.name,
           tuple(d.name for d in dtypes[1:]), a_vec, b_vec, "dm")
    name = _name("gett", key, dtypes)
    b = lambda x: "true" if x else "false"
    targs = ", ".join([f"EincDmTile<{BM}, {BN}, {BK}, {stages}>", *map(b, flags), tout, tcn, *map(b, (a_vec, b_vec))])
    a_arg, b_arg = ("in1", "in0") if lay.swapped else ("in0", "in1")
    spec = (f"extern \"C\" __global__ void __launch_bounds__({nthreads}, {minb})\n"
            f"{name}(void* out, const void* in0, const void* in1, const EincGettMeta meta) {{\n"
            f"  einc_gett_dm<{targs}>(out, {a_arg}, {b_arg}, meta);\n}}\n")
    smem = dm_smem(BM, BN, BK, stages, a_mfast, b_nfast)
    gdesc = lay.gdesc
    stored = lambda fast, x: f"{x}-fast [BK][{x}+8]" if fast else f"K-fast [{x}][BK+4]"
    family = (f"gett {cfg} tiles on the fp64 tensor cores: {nthreads // 32} warps of 64x32 mma fragments "
              f"(m16n8k8 .f64, fp32 converted exactly), {stages}-stage cp.async pipeline, fragments read "
              f"across the slice barrier; groups batch={gdesc('b')} M={gdesc('m')} N={gdesc('n')} K={gdesc('k')}; "
              f"A {stored(a_mfast, 'M')}{' (16-byte runs)' if a_vec else ''}, "
              f"B {stored(b_nfast, 'N')}{' (16-byte runs)' if b_vec else ''}"
              + ("; operands swapped (C^T = B^T A^T: C is unit-stride along M)" if lay.swapped else ""))
    launch = [f"launch:   1-D grid, one {nthreads}-thread block per {BM}x{BN} output tile "
              f"(batch x tile rows x tile columns, grid-stride, capped at 2^31-1), {minb} per SM; "
              f"{smem} bytes of dynamic shared memory",
              f"metadata: EincGettMeta, {8 * len(lay.words)} bytes; {len(lay.tables)} offset table(s)"]
    header = _header(step, family, dtypes, compute, lay.modes_line(step), launch, acc="double")
    source = _assemble(header, ["common.cuh", "gett.cuh", "gett_dm.cuh"], spec)
    grid = max(1, min(tiles, 2 ** 31 - 1))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (nthreads, 1, 1), smem, tuple(lay.tables),
                          8 * len(lay.words), tuple(lay.words))
