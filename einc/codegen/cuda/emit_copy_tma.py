"""The `copy_tma` kernel (kernels/copy_tma.cuh): a rows copy moved by the TMA unit (sm_90).

A rows copy keeps its unit-stride mode and reorders the others (njmi->mnji: rows of i).
The SIMT rows copy decodes every 16-byte vector's offsets from its index (four 32-bit
divisions for three outer modes) and moved bf16 lnim->linm at 2.1-2.2 TB/s; here two
tensor maps describe the input and the output over the same dimensions, and the copy
engine moves whole boxes. ``copy_tma_layout`` says whether a step fits (a raw copy: same
dtype, every stride but the run's a multiple of 16 bytes, at most 5 dimensions after
merging, the run at least 16 bytes); ``emit_copy_tma`` writes the kernel, with the SIMT
rows copy as its twin for pointers that are not 16-byte aligned.

Example, bf16 njmi->mnji at 96x84x84x96: dims (96, 8064, 84) (n and j stay neighbours on
both sides and merge), box (96, 8, 7) (the output's fastest outer mode, nj, and the
input's, m, share the box's rows), input byte strides (16128, 192), output (192, 1548288);
tests/test_copy_tma.py pins these and checks every element's offset through both maps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import Step
from .emit import (sm_count, VERSION, CudaStepKernel, Tmap, _assemble, _cdiv, _header, _merge, _modes_line,
                   _name, _rows_copy_axis, _types)

BOX_BYTES = 16 * 1024  # a box's target size (one stage)
RING_BYTES = 96 * 1024  # a block's stages (two blocks an SM: 192 KB of the 227)
BLOCKS_PER_SM = 2
TMA_TYPES = {1: "UINT8", 2: "UINT16", 4: "UINT32", 8: "UINT64"}


@dataclass(frozen=True)
class CopyTmaLayout:
    """Both tensor maps' dimensions (dim 0 the run; dims 1.. the output's fastest first),
    byte strides of dims 1.. on each side, the box and the element type the maps use."""

    dims: tuple
    box: tuple
    src_strides: tuple
    dst_strides: tuple
    elem: int  # bytes of the maps' element (16-byte elements travel as two 8-byte ones)

    @property
    def nbox(self) -> tuple:
        return tuple(_cdiv(e, b) for e, b in zip(self.dims, self.box))

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.elem


def _side(ext: int, cap: int) -> int:
    """A box extent of at most ``cap`` along a dimension of ``ext``: the whole of it, else the
    divisor of it nearest ``cap`` from below if that is at least half of it, else ``cap``."""
    cap = max(1, min(cap, 256))
    if ext <= cap:
        return ext
    d = next(d for d in range(cap, 0, -1) if ext % d == 0)
    return d if 2 * d >= cap else cap


def copy_tma_layout(step: Step, item: int) -> CopyTmaLayout | None:
    """The maps of a raw rows copy of ``item``-byte elements, or None when TMA can't take it."""
    j = _rows_copy_axis(step)
    if j is None or item not in (1, 2, 4, 8, 16):
        return None
    elem = min(item, 8)
    run = step.modes[j].extent * (item // elem)
    if run * elem < 16:
        return None
    rest = sorted(((m.extent, (step.strides[0][q], step.strides[1][q])) for q, m in enumerate(step.modes)
                   if q != j and m.extent > 1), key=lambda x: -x[1][0])
    rest = _merge(rest)[::-1]  # output's fastest first
    if len(rest) > 4 or any(s * item % 16 or s * item >= 2 ** 40 for _, st in rest for s in st):
        return None
    dims = (run, *(e for e, _ in rest))
    if max(dims) >= 2 ** 32:
        return None
    b0 = min(run, 256)
    if b0 * elem % 16:  # the box's row must be whole 16-byte pieces: round up (the edge is clipped)
        b0 = min(256, _cdiv(b0 * elem, 16) * 16 // elem)
    box = [b0] + [1] * len(rest)
    rows = max(1, BOX_BYTES // (b0 * elem))
    if rest:  # the output's next mode, and the input's, share the box's rows
        src_fast = min(range(len(rest)), key=lambda q: rest[q][1][1])
        if src_fast == 0:
            box[1] = _side(rest[0][0], rows)
        else:
            half = 1 << max(0, (rows.bit_length() - 1) // 2)
            box[1] = _side(rest[0][0], half)
            box[1 + src_fast] = _side(rest[src_fast][0], max(1, rows // box[1]))
    return CopyTmaLayout(dims, tuple(box), tuple(st[1] * item for _, st in rest),
                         tuple(st[0] * item for _, st in rest), elem)


def emit_copy_tma(step: Step, dtypes, compute, lay: CopyTmaLayout, fallback: CudaStepKernel) -> CudaStepKernel:
    """The kernel for ``step`` (copy_tma_layout gave ``lay``); ``fallback`` runs unaligned pointers."""
    rank = len(lay.dims)
    stage = _cdiv(lay.box_bytes, 128) * 128
    stages = max(2, min(8, RING_BYTES // stage))
    nbox = lay.nbox
    boxes = int(np.prod(nbox, dtype=np.int64))
    pad = lambda xs: list(xs) + [1] * (5 - len(xs))
    words = [boxes, lay.box_bytes, stage, *pad(nbox), *pad(lay.box)]
    tout, _, _, _ = _types(dtypes, compute)
    key = (VERSION, "copy_tma", rank, stages, dtypes[0].name)
    name = _name("copy_tma", key, dtypes)
    spec = (f"extern \"C\" __global__ void __launch_bounds__(32)\n"
            f"{name}(void* out, const void* in0, const EincCopyTmaMeta meta, "
            f"const __grid_constant__ EincCopyTmaps tm) {{\n"
            f"  einc_copy_tma<{rank}, {stages}>(&tm, meta);\n}}\n")
    dt = TMA_TYPES[lay.elem]
    header = _header(step, "copy_tma (a rows copy by the TMA unit: boxes loaded through the input's map, "
                     "stored through the output's; one thread per block runs the ring)", dtypes, compute,
                     _modes_line(step),
                     [f"tensor maps: dims {lay.dims} ({dt}), input byte strides {lay.src_strides}, "
                      f"output byte strides {lay.dst_strides}, box {lay.box} ({lay.box_bytes} bytes)",
                      f"launch:   1-D grid of blocks of 32 threads (one works), {stages} stages of {stage} "
                      f"bytes of dynamic shared memory, {boxes} boxes walked grid-stride",
                      f"metadata: EincCopyTmaMeta, {8 * len(words)} bytes"])
    source = _assemble(header, ["common.cuh", "copy_tma.cuh"], spec)
    grid = max(1, min(boxes, BLOCKS_PER_SM * sm_count()))
    tmaps = (Tmap(1, dt, lay.dims, lay.src_strides, lay.box, "NONE"),
             Tmap(0, dt, lay.dims, lay.dst_strides, lay.box, "NONE"))
    return CudaStepKernel(name, source, key, (grid, 1, 1), (32, 1, 1), stages * stage, (), 8 * len(words),
                          tuple(words), aligned=(0, 1), fallback=fallback, tmaps=tmaps)
