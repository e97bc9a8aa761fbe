"""The `permute` kernel (kernels/permute.cuh) for one copy step: tiles made of mode sets.

A copy whose unit-stride runs are short modes (a tensor network's extent-2 modes) gets a
tile of whole modes: the input's fastest modes up to RUN contiguous elements, plus the
output's fastest up to RUN. ``permute_sets`` says whether a step is such a copy (and how
it would be tiled); ``emit_permute`` writes its kernel.

>>> import numpy as np
>>> from einc.ir import Step, Mode
>>> modes = tuple(Mode(l, 2, "free") for l in "abcdefghij")  # a copy reversing 10 modes
>>> strides = (tuple(2 ** j for j in range(10)), tuple(2 ** (9 - j) for j in range(10)))
>>> sets = permute_sets(Step((0,), 1, modes, strides, "reduce", np.dtype("float32"), 0, 0))
>>> sets.vol, len(sets.tile), len(sets.outer)
(1024, 10, 0)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import Step
from .emit import (GRID_CAP, SM_COUNT, SUMMED, VERSION, CudaStepKernel, _assemble, _header, _merge,
                   _modes_line, _name, _pow2_at_least, _types)

RUN = 32  # contiguous elements each side's fast modes should reach (one warp's run)
VMAX_CAP = 2048  # tile elements (VMAX): static shared memory stays under 48 KB
SMEM_CAP = 48 * 1024
TILES_PER_BLOCK = 8  # grid ~ tiles / 8 (the tables are built once per block), capped at SMs x 16


@dataclass(frozen=True)
class PermuteSets:
    """How a copy is tiled: the set's modes (extent, in stride, out stride) in the input's
    order, their output-order positions, and the outer modes (output-major)."""

    tile: tuple
    ord: tuple
    outer: tuple
    vol: int


def _fast_run(modes, side: int) -> list:
    """Indices of the fastest modes on ``side`` (1: input, 2: output), smallest stride
    first, up to RUN elements. (Dense when the tensor is; a sliced view's runs have gaps
    where its sliced modes were, and a tile then reads what sectors it can.)"""
    order = sorted(range(len(modes)), key=lambda j: modes[j][side])
    run, n = [], 1
    for j in order:
        if n >= RUN:
            break
        run.append(j)
        n *= modes[j][0]
    return run


def permute_sets(step: Step) -> PermuteSets | None:
    """The mode-set tiling of a pure copy step whose fast runs differ, or None (not a copy,
    a negative or zero stride, both sides already walking the same fast modes, the single
    long modes the `transpose` kernel tiles, or a tile over VMAX_CAP elements)."""
    if len(step.operands) != 1 or any(m.kind in SUMMED for m in step.modes):
        return None
    if any(s <= 0 for row in step.strides for s, m in zip(row, step.modes) if m.extent > 1):
        return None
    # (extent, input stride, output stride), modes of extent 1 dropped, merged where both walk them as one
    modes = sorted(((m.extent, step.strides[1][j], step.strides[0][j]) for j, m in enumerate(step.modes)
                    if m.extent > 1), key=lambda x: -x[2])
    merged = _merge([(e, (so, si)) for e, si, so in modes])
    modes = [(e, si, so) for e, (so, si) in merged]
    fin, fout = _fast_run(modes, 1), _fast_run(modes, 2)
    if not fin or not fout or fin == fout:
        return None
    if len(fin) == 1 and len(fout) == 1 and min(modes[fin[0]][0], modes[fout[0]][0]) >= RUN:
        return None  # one long mode each side: the transpose kernel's 32 x 32 tiles are full
    # a long mode joins the tile by its inner RUN elements (the rest is an outer mode)
    modes = sorted((piece for e, si, so in modes for piece in (
        ((e // RUN, si * RUN, so * RUN), (RUN, si, so)) if e > RUN and e % RUN == 0 else ((e, si, so),))),
        key=lambda x: -x[2])
    fin, fout = _fast_run(modes, 1), _fast_run(modes, 2)
    members = sorted(set(fin) | set(fout), key=lambda j: modes[j][1])  # input order, fastest first
    vol = int(np.prod([modes[j][0] for j in members], dtype=np.int64))
    tile = tuple(modes[j] for j in members)
    if vol > VMAX_CAP or vol < 2 or _smem(_pow2_at_least(vol, 256), np.dtype(step.compute).itemsize,
                                          _offset_bytes(tile)) > SMEM_CAP:
        return None
    ord_ = tuple(sorted(range(len(tile)), key=lambda q: tile[q][2]))
    outer = tuple(modes[j] for j in range(len(modes)) if j not in members)  # still output-major
    return PermuteSets(tile, ord_, outer, vol)


def _offset_bytes(tile) -> int:
    """Bytes of an in-tile offset: int while the tile's farthest element fits."""
    return 4 if sum((e - 1) * max(si, so) for e, si, so in tile) < 2 ** 31 else 8


def _smem(vmax: int, item: int, off: int) -> int:
    return vmax * item + (vmax // 32) * item + 2 * vmax * off + 2 * vmax


def emit_permute(step: Step, dtypes, compute, sets: PermuteSets) -> CudaStepKernel:
    """The kernel for ``step`` tiled as ``sets`` (permute_sets checked its shared memory)."""
    tout, tc, _, tin = _types(dtypes, compute)
    item = np.dtype(compute).itemsize
    off = _offset_bytes(sets.tile)
    off_c = "int" if off == 4 else "long long"
    vmax = _pow2_at_least(sets.vol, 256)
    R = _pow2_at_least(max(len(sets.outer), 1), 4)
    S = _pow2_at_least(len(sets.tile), 4)
    pad = lambda xs, n, fill: list(xs) + [fill] * (n - len(xs))
    tiles = int(np.prod([e for e, _, _ in sets.outer], dtype=np.int64)) if sets.outer else 1
    words = [sets.vol, len(sets.tile), tiles, len(sets.outer),
             *pad([e for e, _, _ in sets.tile], S, 1), *pad([si for _, si, _ in sets.tile], S, 0),
             *pad([so for _, _, so in sets.tile], S, 0), *pad(sets.ord, S, 0),
             *pad([e for e, _, _ in sets.outer], R, 1), *pad([si for _, si, _ in sets.outer], R, 0),
             *pad([so for _, _, so in sets.outer], R, 0)]
    key = (VERSION, "permute", R, S, vmax, off_c, dtypes[0].name, compute.name, dtypes[1].name)
    name = _name("permute", key, dtypes)
    spec = (f"extern \"C\" __global__ void __launch_bounds__(256)\n"
            f"{name}(void* out, const void* in0, const EincSetPermMeta<{R}, {S}> meta) {{\n"
            f"  einc_permute<{R}, {S}, {vmax}, {off_c}, {tout}, {tc}, {tin[0]}>(out, in0, meta);\n}}\n")
    header = _header(step, f"permute (tiles of whole modes through shared memory, read along the input's "
                     "fastest modes, written along the output's; outer modes from the tile counter)",
                     dtypes, compute, _modes_line(step),
                     [f"tile:     up to {vmax} elements, whole modes (meta.set_*: the input's fastest "
                      f"modes to >= {RUN} elements, and the output's)",
                      f"launch:   1-D grid of 256-thread blocks, one tile at a time, grid-stride; "
                      f"static shared memory {_smem(vmax, item, off)} bytes (VMAX {vmax})",
                      f"metadata: EincSetPermMeta<{R}, {S}>, {8 * len(words)} bytes"])
    source = _assemble(header, ["common.cuh", "permute.cuh"], spec)
    grid = max(1, min(-(-tiles // TILES_PER_BLOCK), SM_COUNT * 16, GRID_CAP))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (256, 1, 1), 0, (), 8 * len(words), tuple(words))
