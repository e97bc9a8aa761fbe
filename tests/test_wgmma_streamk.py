"""The wgmma kernel's stream-K tail (kernels/wgmma.cuh EincWgmmaUnits, einc_wgmma_sk_combine):
where it is taken, the schedule's arithmetic, its kernels' resources, and on the GPU its
answers -- capped grids so that tail tiles split into two and three pieces, ragged K, a batch,
both producers, repeated calls (the arrival counts must be zeroed per launch, graphs too)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import einc
import einc.api
from einc.codegen.cuda import emit_wgmma
from einc.codegen.cuda.emit import emit_step

BIG = ("ki,jk->ji", [(7248, 7248), (7240, 7248)])  # TCCG ccsd ij-ik-kj: 1653 tiles of 128x256
# TCCG ccsd ijkl-imjn-nlmk (its last step: 256x128ws over tabled N)
NJMI = ("njmi,kmln->lkji", [(96, 84, 84, 96), (84, 84, 84, 96)])
BOTH = ("wgmma128x256ws", "wgmma256x128ws")  # the kernel takes either; the emitter only 256x128ws


def _kernel(expr, shapes, dtype="bfloat16", strategy="gett", **kw):
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", strategy=strategy, **kw)
    ks = [emit_step(p, s, "sm_90") for s in p.steps]
    return next(k for k in ks if k.name.startswith("einc_wgmma"))


def test_taken_where_the_last_wave_idles(monkeypatch):
    # (by default the persistent 192x192 tile takes both cases: its 12 waves cost less)
    monkeypatch.setattr(emit_wgmma, "WIDE_SQUARE", 0.0)
    k = _kernel(*NJMI, strategy=None)
    assert k.key[2] == "wgmma256x128ws" and "setmaxnreg 48/104" in k.source
    assert k.grid == (132, 1, 1) and "stream-K" in k.source and "void* scratch" in k.source
    dp, tiles = map(int, re.search(r"the first (\d+) of the (\d+) 256x128 output tiles", k.source).groups())
    assert dp % 132 == 0 and 0 < tiles - dp < 132
    counts = ((tiles - dp + 1) * 4 + 255) // 256 * 256  # + the whole waves' tile counter
    assert (k.scratch, k.scratch_zero) == (counts + 2 * 132 * 256 * 128 * 4, counts)
    from einc.cost import explain_lines
    plan = einc.api.plan_for(*NJMI, "bfloat16", backend="cuda")
    assert any("wgmma256x128ws (TMA) stream-K tail" in line and "waves 1.00" in line for line in explain_lines(plan)[0])
    # 128x256ws keeps one block per tile (stream-K measured slower there)
    big = _kernel(*BIG)
    assert big.key[2] == "wgmma128x256ws" and big.grid == (1653, 1, 1) and big.scratch == 0
    assert "void* scratch" not in big.source
    monkeypatch.setattr(emit_wgmma, "STREAM_K", False)
    off = _kernel(*NJMI, strategy=None)
    assert off.grid[0] > 132 and off.scratch == 0 and off.key != k.key and "setmaxnreg 48/104" not in off.source


def test_gate(monkeypatch):
    sk = emit_wgmma.stream_k
    assert sk("wgmma256x128ws", 1653, 7248, 2) == 132
    assert sk("wgmma128x256ws", 1653, 7248, 2) == 0    # measured slower
    assert sk("wgmma128x256wsp", 1653, 7248, 2) == 0   # C staged apart: not this tail
    assert sk("wgmma256x128ws", 1653, 64, 2) == 0      # one slice per tile: no runs to cut
    assert sk("wgmma256x128ws", 264 * 10 + 131, 7248, 2) == 0  # a nearly full last wave (< 2%)
    assert sk("wgmma256x128ws", 200, 4096, 4) == 132    # tf32: 32-byte k steps, 128 slices
    monkeypatch.setattr(emit_wgmma, "MAX_GRID", 5)
    assert sk("wgmma256x128ws", 18, 2000, 2) == 5


def _schedule(tiles, nk, grid):
    """The kernel's units (EincWgmmaUnits), block by block, in Python: [(block, tile, kb, ke, slot)]."""
    tail = tiles % grid if nk else 0
    dp, iters = tiles - tail, tail * nk
    start = lambda g: iters * g // grid
    out = []
    for g in range(grid):
        out += [(g, t, 0, nk, None) for t in range(g, dp, grid)]
        pos, end = start(g), start(g + 1)
        while pos < end:
            t, kb = divmod(pos, nk)
            ke = min(nk, kb + end - pos)
            whole = kb == 0 and ke == nk
            out.append((g, dp + t, kb, ke, None if whole else 2 * g + (pos != start(g))))
            pos += ke - kb
    return out, dp, iters, start


@pytest.mark.parametrize("tiles,nk,grid", [(1653, 114, 132), (18, 32, 5), (18, 32, 13), (7, 3, 5), (40, 9, 7),
                                           (3, 100, 2), (2048, 128, 132), (5, 1, 3)])
def test_schedule_covers_every_slice_once(tiles, nk, grid):
    units, dp, iters, start = _schedule(tiles, nk, grid)
    seen = np.zeros((tiles, nk), int)
    for _, t, kb, ke, _ in units:
        seen[t, kb:ke] += 1
    assert (seen == 1).all()
    slots = [s for *_, s in units if s is not None]
    assert len(slots) == len(set(slots)) and all(0 <= s < 2 * grid for s in slots)
    block_of = lambda i: ((i + 1) * grid + iters - 1) // iters - 1  # the kernel's formula
    for i in range(iters):
        assert start(block_of(i)) <= i < start(block_of(i) + 1)
    for t in range(dp, tiles):  # a split tile's pieces: blocks block_of(first) .. block_of(last), in k order
        pieces = [(kb, g, s) for g, tt, kb, ke, s in units if tt == t]
        if len(pieces) > 1:
            tl = t - dp
            g0, g1 = block_of(tl * nk), block_of((tl + 1) * nk - 1)
            assert [g for _, g, _ in sorted(pieces)] == list(range(g0, g1 + 1))
            assert [s for *_, s in sorted(pieces)] == [2 * g + (max(start(g), tl * nk) != start(g))
                                                        for g in range(g0, g1 + 1)]


def test_setmaxnreg_targets_fit_the_launch_allocation():
    """A consumer's setmaxnreg.inc past what the block holds waits forever: the targets of every
    stream-K tile must fit its threads x the registers ptxas can give each at one block per SM."""
    for tile, (p, c) in emit_wgmma.SK_REGS.items():
        n = emit_wgmma.threads(tile)
        per_thread = 65536 // n // 8 * 8
        assert 128 * p + (n - 128) * c <= n * per_thread, tile


@pytest.mark.parametrize("tile", BOTH)
@pytest.mark.parametrize("tma", [True, False])
@pytest.mark.parametrize("dtype,precision", [("bfloat16", None), ("float32", "tf32")])
def test_kernels_compile_without_spills(monkeypatch, tile, tma, dtype, precision):
    from test_cuda_codegen import ptxas
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: tile)
    monkeypatch.setattr(emit_wgmma, "SK_TILES", (tile,))
    monkeypatch.setattr(emit_wgmma, "TMA", tma)
    k = _kernel("ik,jk->ij", [(2000, 4096), (1500, 4096)], dtype, precision=precision)
    assert k.scratch and k.grid == (132, 1, 1) and bool(k.tmaps) == tma
    regs, st, ld, log = ptxas(k, "sm_90a")
    assert regs > 0 and (st, ld) == (0, 0), log
    assert "C7515" not in log, log  # wgmma serialised (the tail's loop once counted from u.kb)


# ---------------------------------------------------------------------------------------
# on the GPU

CASES = [
    # expr, shapes, dtype, precision; K ragged (2000 = 31.25 slices of 64 bf16)
    ("ij,jk->ik", [(700, 2000), (2000, 600)], "bfloat16", None),   # B N-major
    ("ik,jk->ij", [(700, 2000), (600, 2000)], "float16", None),    # B K-major
    ("bij,bjk->bik", [(3, 300, 2000), (3, 2000, 520)], "bfloat16", None),  # tiles across a batch
    ("ik,jk->ij", [(700, 1000), (600, 1000)], "float32", "tf32"),  # 32 slices of 8 fp32
]


def _tensor(torch, shape, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype)).cuda()


@pytest.mark.gpu
@pytest.mark.parametrize("grid", [4, 11])
@pytest.mark.parametrize("tile", BOTH)
@pytest.mark.parametrize("tma", [True, False])
@pytest.mark.parametrize("expr,shapes,dtype,precision", CASES)
def test_stream_k_against_numpy(monkeypatch, expr, shapes, dtype, precision, tma, tile, grid):
    """Grids of 4 and 11 blocks: 15 to 30 tiles leave tails of 2 to 8 tiles cut into runs of
    16-24 slices, so tiles split in two and three pieces; three calls, each into a NaN-poisoned
    out= (the second and third replay the plan's graph with its memset of the counts)."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(emit_wgmma, "choose_tile", lambda step: tile)
    monkeypatch.setattr(emit_wgmma, "SK_TILES", (tile,))
    monkeypatch.setattr(emit_wgmma, "TMA", tma)
    monkeypatch.setattr(emit_wgmma, "MAX_GRID", grid)
    einc.api._EXECUTABLES.clear()
    ops = [_tensor(torch, s, dtype, i + 1) for i, s in enumerate(shapes)]
    p = einc.api.plan_for(expr, shapes, dtype, backend="cuda", precision=precision, strategy="gett")
    k = emit_step(p, p.steps[-1], "sm_90")
    assert k.scratch and k.grid == (grid, 1, 1), (k.grid, k.scratch)
    host = [o.double().cpu().numpy() for o in ops]
    ref = np.einsum(expr, *host, optimize=True)
    absref = np.einsum(expr, *[np.abs(h) for h in host], optimize=True)
    lhs, rhs = expr.split("->")
    ext = dict(zip(lhs.replace(",", ""), sum(map(list, shapes), [])))
    terms = int(np.prod([n for l, n in ext.items() if l not in rhs]))
    # fp32 sums, one rounding to the dtype (tf32: each operand rounded to 10 bits too)
    rounding = {"bfloat16": 2.0 ** -7, "float16": 2.0 ** -10, "float32": 2.0 ** -22}[dtype]
    tol = (2.0 ** -23 * (terms + 2) * 4 + rounding + (2.0 ** -9 if precision else 0.0)) * absref + 1e-30
    for call in range(3):
        out = torch.full(ref.shape, float("nan"), dtype=getattr(torch, dtype), device="cuda")
        assert einc.einsum(expr, *ops, out=out, precision=precision, strategy="gett") is out
        got = out.double().cpu().numpy()
        assert not np.isnan(got).any(), f"call {call}: unwritten (poisoned) outputs"
        err = np.abs(got - ref)
        assert (err <= tol).all(), f"call {call}: max error {err.max()} at {np.argwhere(err > tol)[:3]}"
