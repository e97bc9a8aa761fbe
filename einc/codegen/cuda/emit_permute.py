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
from .emit import (GRID_CAP, sm_count, SUMMED, VERSION, CudaStepKernel, _assemble, _header, _merge,
                   _modes_line, _name, _pow2_at_least, _types)

RUN = 32  # contiguous elements each side's fast modes should reach (one warp's run)
VMAX_CAP = 2048  # tile elements (VMAX): static shared memory stays under 48 KB
TILE_MIN = 1024  # tile elements below which the tile takes more of the output's modes
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


def _fast_run(modes, side: int, target: int = RUN) -> list:
    """The fastest modes on ``side`` (1: input, 2: output), smallest stride first, up to
    ``target`` elements. (Dense when the tensor is; a sliced view's runs have gaps where
    its sliced modes were, and a tile then reads what sectors it can.)"""
    run, n = [], 1
    for m in sorted(modes, key=lambda m: m[side]):
        if n >= target:
            break
        run.append(m)
        n *= m[0]
    return run


def _split_to(modes, side: int, target: int, whole=()) -> list:
    """``modes`` with the mode that would overshoot ``target`` on ``side`` cut in two, its
    inner part just what the run needs (its smallest divisor that reaches the target): a
    long mode joins a tile by a few elements, the rest of it stays an outer mode. Modes in
    ``whole`` (the other side's run, in the tile already) are never cut."""
    n = 1
    for m in sorted(modes, key=lambda m: m[side]):
        if n >= target:
            break
        e, si, so = m
        need = -(-target // n)
        f = e if m in whole else next((d for d in range(need, e) if e % d == 0), e)
        if f < e:
            return [x for x in modes if x != m] + [(f, si, so), (e // f, si * f, so * f)]
        n *= e
    return modes


def _tile(modes, in_target: int, out_target: int):
    """(members of the tile, modes): the input's fastest modes to ``in_target`` elements and
    the output's to ``out_target``, long modes cut to what the runs need."""
    modes = _split_to(modes, 1, in_target)
    fin = _fast_run(modes, 1, in_target)
    modes = _split_to(modes, 2, out_target, whole=fin)
    return set(fin) | set(_fast_run(modes, 2, out_target)), modes


def permute_sets(step: Step) -> PermuteSets | None:
    """The mode-set tiling of a pure copy step whose fast runs differ, or None (not a copy,
    a negative or zero stride, both sides already walking the same fast modes, the single
    long modes the `transpose` kernel tiles, or a tile over VMAX_CAP elements). A tile under
    TILE_MIN elements takes more of the output's fast modes (fewer, fuller tiles: more loads
    in flight per thread, fewer barriers per byte)."""
    if len(step.operands) != 1 or any(m.kind in SUMMED or m.extent == 0 for m in step.modes):
        return None  # (an empty copy has nothing to tile: extent-1 modes are dropped below, 0s must not be)
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
    if len(fin) == 1 and len(fout) == 1 and min(fin[0][0], fout[0][0]) >= RUN:
        return None  # one long mode each side: the transpose kernel fits its tiles to them
    volume = lambda ms: int(np.prod([m[0] for m in ms], dtype=np.int64))
    targets = (RUN, RUN)
    members, cut = _tile(modes, *targets)
    while volume(members) < TILE_MIN:  # longer runs on one side or the other, while they add
        tries = [(volume(t[0]), -k, t, tg) for k, tg in enumerate(((targets[0], 2 * targets[1]),
                                                                   (2 * targets[0], targets[1])))
                 for t in [_tile(modes, *tg)]]
        best = max((x for x in tries if x[0] <= VMAX_CAP), default=None)
        if best is None or best[0] <= volume(members):
            break
        _, _, (members, cut), targets = best
    tile = tuple(sorted(members, key=lambda m: m[1]))  # input order, fastest first
    vol = volume(tile)
    if vol > VMAX_CAP or vol < 2 or _smem(_pow2_at_least(vol, 256), np.dtype(step.compute).itemsize,
                                          _offset_bytes(tile)) > SMEM_CAP:
        return None
    ord_ = tuple(sorted(range(len(tile)), key=lambda q: tile[q][2]))
    outer = tuple(sorted((m for m in cut if m not in members), key=lambda m: -m[2]))  # output-major
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
    grid = max(1, min(-(-tiles // TILES_PER_BLOCK), sm_count() * 16, GRID_CAP))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (256, 1, 1), 0, (), 8 * len(words), tuple(words))
