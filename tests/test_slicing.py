"""Slicing (einc.slicing): forced slicing against numpy, the per-slice peak measured against
memory_limit, stacked output labels, pickling, and the Sycamore network's plan."""
import json
import pathlib
import pickle
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import einc
from einc import distributed as D
from einc.errors import EincValueError
from einc.slicing import PathModel, arena_layout, greedy_slices, plan_sliced

ROOT = pathlib.Path(__file__).resolve().parents[1]
rng = np.random.default_rng(7)

CASES = [  # (name, subscripts, shapes, memory_limit)
    ("chain3", "ij,jk,kl->il", [(24, 30), (30, 36), (36, 20)], "9KB"),
    ("summed only", "ij,jk,ki->", [(20, 24), (24, 28), (28, 20)], "8KB"),
    ("outer: stacked only", "i,j->ij", [(40,), (50,)], "1KB"),
    ("network", "abc,cde,efa,bdf->", [(6, 7, 8), (8, 6, 7), (7, 8, 6), (7, 6, 8)], "4KB"),
    ("batched", "bij,bjk->bik", [(5, 12, 14), (5, 14, 10)], "3KB"),
    ("diagonal and broadcast", "ii,ij,j->j", [(30, 30), (30, 40), (1,)], "2KB"),
    ("ellipsis", "...ij,jk->...ik", [(3, 4, 10, 12), (12, 9)], "3KB"),
]


def _arrays(shapes, dtype=np.float64):
    out = [rng.standard_normal(s) for s in shapes]
    if np.dtype(dtype).kind == "c":
        out = [a + 1j * rng.standard_normal(a.shape) for a in out]
    return [a.astype(dtype) for a in out]


@pytest.mark.parametrize("name,subs,shapes,limit", CASES, ids=[c[0] for c in CASES])
def test_forced_slicing_matches_numpy(name, subs, shapes, limit):
    arrays = _arrays(shapes)
    sp = plan_sliced(subs, arrays, limit)
    assert sp.nslices > 1 and sp.peak_bytes <= sp.limit
    got = D.run(sp, arrays, "local")
    np.testing.assert_allclose(got, np.einsum(subs, *arrays), rtol=1e-10, atol=1e-10)


def test_complex_slicing_and_einsum_entry():
    arrays = _arrays([(16, 12), (12, 14), (14, 16)], np.complex128)
    got = einc.einsum("ij,jk,ki->i", *arrays, memory_limit="2KB", executor="local")
    np.testing.assert_allclose(got, np.einsum("ij,jk,ki->i", *arrays), rtol=1e-10)


def test_sublist_form_and_out():
    a, b = _arrays([(20, 30), (30, 10)])
    out = np.empty((20, 10))
    r = einc.einsum(a, [0, 1], b, [1, 2], [0, 2], memory_limit="2KB", executor="local", out=out)
    assert r is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)


def test_stacked_output_labels():
    a, b = _arrays([(64, 8), (8, 64)])
    sp = plan_sliced("ij,jk->ik", [a, b], "4KB")
    assert sp.stacked and set(sp.stacked) <= set(sp.output)
    assert sp.overhead_flops >= 0 and sp.groups == np.prod(sp.sliced_extents[:len(sp.stacked)])
    np.testing.assert_allclose(D.run(sp, [a, b]), a @ b, rtol=1e-12)


MEASURED = [  # limits well above the ~4 KB of Python objects a block also allocates
    ("chain3", "ij,jk,kl->il", [(120, 160), (160, 200), (200, 100)], "120KB"),
    ("summed only", "ij,jk,ki->", [(100, 120), (120, 140), (140, 100)], "100KB"),
    ("network", "abc,cde,efa,bdf->", [(16, 18, 20), (20, 16, 18), (18, 20, 16), (18, 16, 20)], "150KB"),
    ("batched", "bij,bjk->bik", [(8, 60, 70), (8, 70, 50)], "60KB"),
]


@pytest.mark.parametrize("name,subs,shapes,limit", MEASURED, ids=[c[0] for c in MEASURED])
def test_measured_peak_within_limit(name, subs, shapes, limit):
    """tracemalloc sees every buffer a block allocates (arena, result, running sum, and
    Python's own objects): the peak over a block, from a fresh arena, is at most the limit,
    and the unsliced plan's temporaries plus its result would not have fitted."""
    arrays = _arrays(shapes)
    sp = plan_sliced(subs, arrays, limit, block=3)
    unsliced = einc.api.plan_for(subs, shapes)
    need = sum(b.size * 8 for b in unsliced.buffers if b.role == "temp") + np.prod(unsliced.out_shape) * 8
    assert need + sum(a.nbytes for a in arrays) > sp.limit  # slicing was needed
    D.run_block(sp, arrays, 0)  # compile, and fill the thread's GEMM scratch
    tracemalloc.start()
    try:
        for b in range(min(4, sp.nblocks)):
            # tracemalloc counts every thread's allocations: another thread left behind by an
            # earlier test (Dask's offload thread outlives test_distributed) can add to one window, never take
            # away, so a block's peak is the least of three runs (each from a fresh arena)
            peaks = []
            for _ in range(3):
                D._LOCAL.arenas.pop(sp.token, None)
                tracemalloc.reset_peak()
                before = tracemalloc.get_traced_memory()[0]
                part = D.run_block(sp, arrays, b)
                peaks.append(tracemalloc.get_traced_memory()[1] - before)
                del part
            assert min(peaks) <= sp.limit, (peaks, sp.peak_bytes, sp.limit)
            assert min(peaks) >= sp.arena_bytes  # the arena really is allocated by the block
    finally:
        tracemalloc.stop()


def test_arena_reuses_dead_temporaries():
    p = einc.api.plan_for("ab,bc,cd,de,ef->af", [(40, 40)] * 5, optimize=[(0, 1), (0, 3), (0, 2), (0, 1)])
    offsets, nbytes = arena_layout(p)
    temps = {i: b for i, b in enumerate(p.buffers) if b.role == "temp"}
    assert len(temps) == 3 and nbytes == 2 * 40 * 40 * 8  # the first chain link dies before the third
    assert set(dict(offsets)) == set(temps)


def test_path_model_and_greedy():
    m = PathModel(["ij", "jk", "kl"], "il", dict(i=10, j=100, k=100, l=10), [(0, 1), (0, 1)])
    assert m.peak(()) == (10 * 100 + 100 * 100 + 100 * 10) + 10 * 100 + 10 * 10  # inputs, ik, il
    fixed = greedy_slices(m, 6000)
    assert m.peak(fixed) <= 6000
    assert m.flops(fixed) >= m.flops(())


def test_plan_pickles_and_runs_the_same():
    arrays = _arrays([(24, 30), (30, 36), (36, 20)])
    sp = plan_sliced("ij,jk,kl->il", arrays, "9KB")
    sp2 = pickle.loads(pickle.dumps(sp))
    assert sp2 == sp and sp2.plan == sp.plan
    assert np.array_equal(D.run(sp2, arrays), D.run(sp, arrays))


def test_cotengra_and_einc_slicers_both_fit():
    pytest.importorskip("cotengra")
    arrays = _arrays([(6, 7, 8), (8, 6, 7), (7, 8, 6), (7, 6, 8)])
    for slicer in ("einc", "cotengra"):
        sp = plan_sliced("abc,cde,efa,bdf->", arrays, "4KB", slicer=slicer)
        assert sp.peak_bytes <= sp.limit
        np.testing.assert_allclose(D.run(sp, arrays), np.einsum("abc,cde,efa,bdf->", *arrays), rtol=1e-10)


def test_refusals():
    with pytest.raises(EincValueError):
        plan_sliced("ij,jk->ik", [(4, 4), (4, 4)], "lots")
    with pytest.raises(EincValueError):
        plan_sliced("ij,jk->ik", [(4, 4), (4, 4)], 8)  # not even one element of each fits
    with pytest.raises(EincValueError):
        einc.einsum("ij,jk->ik", np.eye(2), np.eye(2), memory_limit="1MB", executor=object())


def test_explain_shows_slicing():
    r = subprocess.run([sys.executable, "-m", "einc", "explain", "ij,jk,kl->il", "--shapes",
                        "64x64,64x64,64x64", "--memory-limit", "64KiB"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "sliced: i=64 (stacked)" in r.stdout and "per-slice peak" in r.stdout
    assert "slicing overhead" in r.stdout and "slices: " in r.stdout


def _sycamore():
    d = json.loads((ROOT / "benchmarks" / "sycamore_n53_m14.json").read_text())
    sys.path.insert(0, str(ROOT / "scripts"))
    import sycamore_bench
    return d, sycamore_bench


def test_sycamore_plan_without_executing():
    """The bench's planning on the real network. The file's 256-slice tree (cotengra's 8
    sliced labels, largest intermediate 2**31 elements) peaks at 38.7 GB on the GPU plan:
    its GEMM steps first copy A into GEMM order (A's M and K modes interleave), a second
    2**31-element tensor live beside the first. So a 64 GiB device takes that tree, and the
    issue's 32 GiB bound (34.36 GB or exactly 2**35 bytes) needs 512 slices."""
    d, bench = _sycamore()
    sp = bench.plan(d, "64GiB")
    name = dict(sp.labels)
    assert sp.nslices == 256 and sp.peak_bytes <= 64 * 2**30
    assert sorted(name[s] for s in sp.sliced) == sorted(d["sliced"]["2^31"]["sliced_inds"])
    for limit, nbytes in (("34.36GB", 34.36e9), ("32GiB", 2**35)):
        sp = bench.plan(d, limit)
        assert sp.nslices == 512 and sp.peak_bytes <= nbytes



def test_docstring_examples():
    import doctest
    import einc.slicing
    for mod in (einc.slicing, D):
        failed, tried = doctest.testmod(mod)
        assert tried > 0 and failed == 0, mod.__name__
