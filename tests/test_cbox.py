"""cbox: C stored by TMA boxes -- the host side, without a GPU. Each layout's boxes, copied
through the tensor map as the TMA store does (cbox.place_tiles), must put every tile
element (m, n) at C's own offset for it, every element of C exactly once."""

import itertools

import numpy as np
import pytest

from einc import api
from einc.codegen.cuda.cbox import c_boxes, place_tiles
from einc.codegen.cuda.emit import gett_layout


def _plan(subs, shapes, dtype="bfloat16"):
    return api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")


def _c_offset(modes, x):
    """C's element offset of index x of a group (modes outermost first, digits row-major)."""
    off = 0
    for e, st in reversed(modes):
        off += (x % e) * st[0]
        x //= e
    return off


# (subscripts, shapes, kernel tile bm x bn): ccsd_t's four layouts at small extents (tiles cut
# a mode, merge modes, split a box past 256), a batch, a plain GEMM, lki,jl's interleaved C
CASES = [
    ("jibm,cakm->kjicba", [(3, 6, 4, 8), (4, 6, 3, 8)], 32, 32),
    ("jiam,cbkm->kjicba", [(3, 6, 8, 8), (4, 8, 3, 8)], 32, 32),
    ("jicm,bakm->kjicba", [(3, 6, 4, 8), (4, 6, 3, 8)], 32, 32),
    ("kibm,cajm->kjicba", [(3, 6, 4, 8), (4, 6, 3, 8)], 32, 32),
    ("jibm,cakm->kjicba", [(2, 4, 20, 8), (2, 30, 24, 8)], 128, 128),
    ("zik,zkj->zij", [(3, 64, 8), (3, 8, 48)], 32, 32),
    ("ik,kj->ij", [(96, 16), (16, 64)], 32, 32),
    ("lki,jl->kji", [(16, 6, 32), (32, 16)], 32, 32),
]


@pytest.mark.parametrize("subs,shapes,bm,bn", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_the_boxes_put_every_tile_element_where_c_has_it(subs, shapes, bm, bn):
    p = _plan(subs, shapes)
    lay = gett_layout(p.steps[-1], bm, bn, metadata=False)
    cb = c_boxes(lay, 2, bm, bn)
    assert cb is not None and cb.tile_m * cb.tile_n >= bm * bn // 2
    assert all(b <= 256 for b in cb.tmap.box) and len(cb.tmap.dims) <= 5
    assert (cb.tmap.box[0] * 2) % 16 == 0 and all(s % 16 == 0 for s in cb.tmap.strides)
    M, N, B = lay.ext["m"], lay.ext["n"], lay.ext["b"]
    assert M % cb.tile_m == 0 and N % cb.tile_n == 0
    assert len(cb.coords_m) == M // cb.tile_m and len(cb.coords_n) == N // cb.tile_n
    # the staging offsets: distinct, dense in the box, pairs of columns adjacent
    rows, cols = cb.offsets[:cb.tile_m], cb.offsets[bm:bm + cb.tile_n]
    staged = (rows[:, None] + cols[None, :]).ravel()
    assert sorted(staged) == list(range(cb.tile_m * cb.tile_n))
    assert (cb.offsets[cb.tile_m:bm] == -1).all() and (cb.offsets[bm + cb.tile_n:] == -1).all()
    assert (cols[1::2] == cols[0::2] + 1).all()
    where = place_tiles(cb, bm, M // cb.tile_m, N // cb.tile_n, B)
    want = {}
    bstride = lay.G["b"][0][1][0] if lay.G["b"] else 0
    for bi, m, n in itertools.product(range(B), range(M), range(N)):
        want[bi * bstride + _c_offset(lay.G["m"], m) + _c_offset(lay.G["n"], n)] = (bi, m, n)
    assert where == want


@pytest.mark.parametrize("subs,shapes,why", [
    ("ij,jk->ki", [(64, 64), (64, 64)], "C unit-stride along the kernel's M only after a swap: fine"),
    ("ik,kj->ij", [(128, 16), (16, 7)], "an odd inner box"),
    ("ik,kj->ij", [(128, 16), (16, 6)], "an inner box of 12 bytes"),
    ("ijk,kl->ilj", [(16, 17, 8), (8, 16)], "a tile that fills too little (17 is prime)"),
])
def test_layouts_the_boxes_do_not_take(subs, shapes, why):
    p = _plan(subs, shapes)
    lay = gett_layout(p.steps[-1], 32, 32, metadata=False)
    cb = c_boxes(lay, 2, 32, 32)
    assert (cb is not None) == why.endswith("fine"), (why, cb)
