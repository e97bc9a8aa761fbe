"""C stored by TMA boxes: tiles aligned to C's modes (the stream_mma kernel's epilogue).

A step whose C interleaves the operands' free modes (TCCG ccsd_t: C = kjicba, the kernel's
M = jib and N = kca, every extent 20 or 24) writes 48-byte runs at scattered offsets; a
thread storing them looks up its row's and columns' offsets and checks every 16-byte piece
for a run (session 22's ncu: 40% of the kernel's warp samples in that store loop). If a
tile's rows are a box of M's modes -- the inner modes whole, the next one a divisor of its
extent, the outer ones a single index -- and its columns a box of N's, the tile is one box
of C seen as a tensor over its modes (in stride order, neighbours merged where the box stays
a box): the kernel stages the tile densely in that box's layout and one thread stores it
with ``cp.async.bulk.tensor`` (no per-element offsets, the copy engine writes it).

>>> import einc.api
>>> from einc.codegen.cuda.emit import gett_layout
>>> p = einc.api.plan_for("jibm,cakm->kjicba", [(20, 24, 20, 24), (20, 24, 20, 24)], "bfloat16", backend="cuda")
>>> cb = c_boxes(gett_layout(p.steps[-1], 128, 128, metadata=False), 2, 128, 128)
>>> cb.tile_m, cb.tile_n, cb.tmap.dims, cb.tmap.box, cb.tmap.strides
(120, 120, (240, 40, 9600), (240, 10, 6), (480, 19200))
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .emit import Tmap

BOX_MAX = 256  # elements per dimension of a TMA box
MAX_RANK = 5  # dimensions of a tensor map
MIN_FILL = 0.5  # the smallest tile (of bm x bn) worth the box epilogue
_TMAP_DTYPE = {2: "UINT16", 4: "UINT32"}  # raw bits: the store copies, never converts


@dataclass(frozen=True)
class CBoxes:
    """How a step's C is stored by boxes: the tile (tile_m x tile_n valid rows and columns
    of the kernel's bm x bn), C's tensor map, and three int64 tables for the kernel:
    ``offsets`` (bm + bn entries: each tile row's, then column's, element offset in the
    staged box; -1 outside the tile), ``coords_m`` / ``coords_n`` (4 words per M / N tile:
    its map coordinates packed two 32-bit halves a word, dims 0-1, 2-3, 4, 0, summed with
    the other group's), and the map dimension of a batch index (-1: none)."""

    tile_m: int
    tile_n: int
    tmap: Tmap
    offsets: np.ndarray
    coords_m: np.ndarray
    coords_n: np.ndarray
    batch_dim: int

    @property
    def rank(self) -> int:
        return len(self.tmap.dims)


def _group_box(modes, cap: int):
    """(tile, [(extent, box, inner, C stride)] innermost first) of a group (outermost first
    in ``modes``): whole modes from the inside while the tile stays within ``cap``, the next
    one the largest divisor of its extent that fits, the rest one index."""
    out, tile, inner, cut = [], 1, 1, False
    for e, st in reversed(modes):
        if cut:
            b = 1
        elif tile * e <= cap:
            b = e
        else:
            b = max(d for d in range(1, cap // tile + 1) if e % d == 0)
            cut = True
        out.append((int(e), int(b), inner, int(st[0])))
        tile, inner = tile * b, inner * int(e)
    return tile, out


def _pack(coords: np.ndarray) -> np.ndarray:
    """[tiles, 5] non-negative int32 coordinates -> [tiles, 4] int64 words (lo | hi << 32)."""
    c = coords.astype(np.uint64)
    w = np.zeros((len(c), 4), np.uint64)
    w[:, 0] = c[:, 0] | (c[:, 1] << np.uint64(32))
    w[:, 1] = c[:, 2] | (c[:, 3] << np.uint64(32))
    w[:, 2] = c[:, 4]
    return w.view(np.int64)


def c_boxes(lay, itemsize: int, bm: int, bn: int) -> CBoxes | None:
    """C's box tiling for a kernel of bm x bn tiles over ``lay`` (emit.GettLayout), or None
    where it does not fit: C's unit-stride mode must be the innermost of N, with an even box
    of a multiple of 16 bytes; the tile must fill MIN_FILL of bm x bn; the map at most five
    dimensions (a batch index one of them) of boxes up to 256 and strides in multiples of
    16 bytes; a tabled batch is not taken. Of the N tiles that fit, the widest whose box
    rows are whole 32-byte sectors (``ROW_ALIGN``): a tile of bf16 ccsd_t `cmji,bakm` 120
    wide wrote 240-byte rows, every other one starting mid-sector, and ran 90 us against the
    threads' stores' 66 (session 22c, ncu)."""
    G = lay.G
    if itemsize not in _TMAP_DTYPE or not G["m"] or not G["n"] or len(G["b"]) > 1:
        return None
    if any(e >= 2 ** 31 for e in lay.ext.values()):
        return None
    seen = set()
    for cap in range(bn, 0, -1):
        tn = _group_box(G["n"], cap)[0]
        if tn in seen:
            continue
        seen.add(tn)
        cb = _boxes(lay, itemsize, bm, bn, cap)
        if cb is None or (cb.tmap.box[0] * itemsize) % ROW_ALIGN == 0:
            return cb
    return None


ROW_ALIGN = 32  # bytes: a box row's length, so that rows start on sector boundaries


def _boxes(lay, itemsize: int, bm: int, bn: int, cap_n: int) -> CBoxes | None:
    """c_boxes with the N tile within ``cap_n`` (row alignment not checked)."""
    G = lay.G
    tm, mm = _group_box(G["m"], bm)
    tn, nn = _group_box(G["n"], cap_n)
    if tm * tn < MIN_FILL * bm * bn:
        return None
    modes = sorted([("m", *x) for x in mm] + [("n", *x) for x in nn], key=lambda x: x[4])
    g0, _, b0, _, s0 = modes[0]
    if g0 != "n" or s0 != 1 or b0 % 2 or any(x[4] <= 0 for x in modes):
        return None
    # dimensions: [extent, stride, box, [(mode, multiplier)]]; a mode joins the one below it
    # when it continues it in memory and the box stays one range of the joined index: the
    # dimension below is whole, or this mode's box is one index. A dimension's coordinates
    # are then multiples of its box (whole modes, one cut mode, single indices above it).
    dims = []
    for i, (_, e, b, _, s) in enumerate(modes):
        if dims:
            d = dims[-1]
            if s == d[1] * d[0] and (d[2] == d[0] or b == 1):
                d[3].append((i, d[0]))
                d[0], d[2] = d[0] * e, d[2] * b
                continue
        dims.append([e, s, b, [(i, 1)]])
    # a box past BOX_MAX as two dimensions (x, e / x), boxes (x, b / x), coordinates (0, c / x):
    # x divides the box, so every coordinate (a multiple of the box) and every term of it
    # (whole modes give 0) divides by x; rows of x elements (the longest that fits)
    split = []  # [extent, stride, box, members, divisor of the members' terms]
    for k, (e, s, b, members) in enumerate(dims):
        if b <= BOX_MAX:
            split.append((e, s, b, members, 1))
            continue
        cut = [x for x in range(BOX_MAX, 0, -1) if b % x == 0 and b // x <= BOX_MAX
               and (k or (x * itemsize) % 16 == 0)]
        if not cut:
            return None
        x = cut[0]
        split += [(x, s, x, [], 1), (e // x, s * x, b // x, members, x)]
    batch_dim = -1
    if G["b"]:
        e, st = G["b"][0]
        split.append((int(e), int(st[0]), 1, [], 1))
        batch_dim = len(split) - 1
    if len(split) > MAX_RANK or (split[0][2] * itemsize) % 16 or any(e >= 2 ** 31 for e, *_ in split):
        return None  # (coordinates are 32-bit signed)
    if any((s * itemsize) % 16 or s * itemsize >= 2 ** 40 for _, s, _, _, _ in split[1:]):
        return None
    # staging offsets: modes in stride order, each box dense inside the ones below it
    place = np.cumprod([1] + [b for _, _, b, _, _ in modes[:-1]])
    offsets = np.full(bm + bn, -1, np.int64)
    for g, tile, base in (("m", tm, 0), ("n", tn, bm)):
        r = np.arange(tile)
        offsets[base:base + tile] = sum(((r // inner) % e) * place[i]
                                        for i, (gg, e, _, inner, _) in enumerate(modes) if gg == g)
    # each tile's map coordinates (its first row's / column's digits; whole boxes give 0)
    dim_of = {i: (k, mult, div) for k, (_, _, _, members, div) in enumerate(split) for i, mult in members}
    coords = {}
    for g, tile, ext in (("m", tm, lay.ext["m"]), ("n", tn, lay.ext["n"])):
        first = np.arange(ext // tile, dtype=np.int64) * tile
        c = np.zeros((len(first), 5), np.int64)
        for i, (gg, e, _, inner, _) in enumerate(modes):
            if gg == g and i in dim_of:
                k, mult, div = dim_of[i]
                term = ((first // inner) % e) * mult
                assert not (term % div).any()
                c[:, k] += term // div
        coords[g] = _pack(c)
    tmap = Tmap(0, _TMAP_DTYPE[itemsize], tuple(e for e, *_ in split), tuple(s * itemsize for _, s, *_ in split[1:]),
                tuple(b for _, _, b, *_ in split), "NONE")
    return CBoxes(tm, tn, tmap, offsets, coords["m"], coords["n"], batch_dim)


def place_tiles(cb: CBoxes, bm: int, tiles_m: int, tiles_n: int, batch: int = 1) -> dict:
    """What the boxes write, for tests: {C element offset: (batch, m, n)} from staging each
    tile's (m, n) at its offset and copying every box through the map as the TMA store does
    (coordinates per dimension, innermost first; strides in bytes)."""
    dims, box = cb.tmap.dims, cb.tmap.box
    E = 2 if cb.tmap.dtype == "UINT16" else 4
    strides = (1,) + tuple(s // E for s in cb.tmap.strides)
    unpack = lambda w: [int(w[0]) & 0xFFFFFFFF, int(w[0]) >> 32, int(w[1]) & 0xFFFFFFFF, int(w[1]) >> 32, int(w[2])]
    where = {}
    for bi in range(batch):
        for i in range(tiles_m):
            for j in range(tiles_n):
                c = [x + y for x, y in zip(unpack(cb.coords_m[i]), unpack(cb.coords_n[j]))]
                if cb.batch_dim >= 0:
                    c[cb.batch_dim] += bi
                box_elems = {}
                for r in range(cb.tile_m):
                    for q in range(cb.tile_n):
                        box_elems[int(cb.offsets[r] + cb.offsets[bm + q])] = (bi, i * cb.tile_m + r, j * cb.tile_n + q)
                for flat, val in box_elems.items():
                    pos, rest = [], flat
                    for b in box:
                        pos.append(rest % b)
                        rest //= b
                    idx = [c[d] + pos[d] for d in range(len(dims))]
                    if all(0 <= x < n for x, n in zip(idx, dims)):
                        where[sum(x * s for x, s in zip(idx, strides))] = val
    return where
