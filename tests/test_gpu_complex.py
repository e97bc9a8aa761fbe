"""Complex GEMMs on the GPU: plan.complex_as_real on the CUDA backend (execute_cuda.py).

A complex binary step C = A B runs as one real GEMM C_r = A_r M with M = [[B_re, B_im],
[-B_im, B_re]] built by a copy and a sign flip; A, C and M's halves are alias buffers (a
pointer into another buffer plus an element offset) and the signs a const buffer. The
first half runs anywhere: the plans' structure, the CUDA plans executed by the CPU
executor, every kernel compiled by NVRTC, and the graph path's pointers against the
recording fake driver of test_cuda_graphs. The second half (marked gpu) runs numpy's
differential checks on the device, direct and through graph replays.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import einc
import einc.execute_cuda as xc
from einc.api import plan_for
from einc.execute import Executable
from oracle import assert_matches
from test_cuda_graphs import FakeRuntime, _calls, fake  # noqa: F401  (fake: the fixture)

DTYPES = ["complex64", "complex128"]
# (subscripts, shapes, strategy): the rewrite applies to each on the CUDA backend
CASES = [
    ("ij,jk->ik", [(300, 200), (200, 100)], None),                       # GEMM
    ("bij,bjk->bik", [(4, 128, 96), (4, 96, 80)], None),                 # batched
    ("ji,kj->ik", [(160, 256), (120, 160)], None),                       # both transposed
    ("ij,jk->ik", [(257, 131), (131, 67)], "gett"),                      # ragged tiles
    ("ij,jk->ik", [(1024, 1024), (1024, 1024)], None),                   # split-K
    ("ik,kj->ij", [(5000, 7), (7, 3)], None),                            # skinny: N' = 6
    ("abcdefghijklmnop,mnopqrst->qarbscdtefghijkl", [(2,) * 16, (2,) * 8], None),  # sycamore-like
    ("aibjckdlemfnog,ijklmno->gabcdefn", [(2,) * 14, (2,) * 7], "gett"),  # K modes interleaved
    ("aibjckdlemfnogphqruv,kjilmnopstw->gbacdqefhrsuvtw", [(2,) * 20, (2,) * 11], None),  # A copied
    ("ij,jk->ki", [(200, 96), (96, 150)], "gett"),                       # C unit-stride along M
]
IDS = [f"{s}-{len(sh[0])}d-{st}" for s, sh, st in CASES]


def _ops(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(dtype) for s in shapes]


def _terms(subs, shapes):
    ext = {l: n for t, s in zip(subs.split("->")[0].split(","), shapes) for l, n in zip(t, s)}
    out = subs.split("->")[1]
    return int(np.prod([n for l, n in ext.items() if l not in out])) or 1


def _rewritten(plan) -> bool:
    return any(b.role == "alias" for b in plan.buffers) and any(b.role == "const" for b in plan.buffers)


# --- the CUDA plan (no device needed) ----------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subs,shapes,strategy", CASES, ids=IDS)
def test_cuda_plan_runs_complex_gemms_as_real_ones(subs, shapes, strategy, dtype):
    p = plan_for(subs, shapes, dtype, backend="cuda", strategy=strategy)
    assert _rewritten(p), [s.text for s in p.steps]
    real = np.dtype(np.dtype(dtype).char.lower())
    gemm = [s for s in p.steps if s.strategy == "gett"]
    assert len(gemm) == 1 and np.dtype(gemm[0].compute) == real
    assert all(p.buffers[w].dtype == real for w in (gemm[0].result, *gemm[0].operands))
    # no complex arithmetic is left: a complex step is at most A's copy into GEMM order
    assert all(np.dtype(s.compute).kind == "f" or (len(s.operands) == 1 and {m.kind for m in s.modes} <= {"free"})
               for s in p.steps)
    srcs = xc.arg_sources(p)
    assert srcs is not None  # aliases and consts resolve: the plan can replay as a graph
    assert any(k == "const" for step in srcs for k, _ in step)
    assert any(o for step in xc.arg_offsets(p) for o in step)  # M's -B_im half, B's imaginary parts


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subs,shapes,strategy", CASES, ids=IDS)
def test_cuda_plan_matches_numpy_on_the_cpu_executor(subs, shapes, strategy, dtype):
    """The CUDA plan's steps (M's layout, offsets, GPU copies, split-K) computed by the CPU
    kernels: the plan is right independently of the CUDA kernels."""
    p = plan_for(subs, shapes, dtype, backend="cuda", strategy=strategy)
    ops = _ops(shapes, dtype)
    out = np.full(p.out_shape, np.nan, dtype=p.out_dtype)
    Executable(p)(ops, out)
    assert_matches(out, subs, *ops, terms=_terms(subs, shapes))


def test_the_smaller_operand_becomes_m():
    """M has twice its operand's bytes: it is built from the smaller one, either side."""
    for subs, shapes in [("ij,jk->ik", [(4096, 64), (64, 32)]), ("jk,ij->ik", [(64, 32), (4096, 64)])]:
        p = plan_for(subs, shapes, "complex64", backend="cuda")
        assert _rewritten(p)
        mixed = [b for b in p.buffers if b.role == "temp"]
        assert max(b.size for b in mixed) == 64 * 32 * 4


def test_k_and_n_are_one_stride_each_for_a_plain_gemm():
    """M = [k, p, n, r]: a K-fast A and an N-fast C need no offset tables and no copies."""
    from einc.codegen.cuda.emit import gett_layout
    p = plan_for("ij,jk->ik", [(2048, 512), (512, 256)], "complex64", backend="cuda")
    (gemm,) = [s for s in p.steps if s.strategy == "gett"]
    assert len(p.steps) == 3  # copy, flip, GEMM: no GEMM-order copies
    assert not any(gett_layout(gemm, 128, 128).tabled.values())


def test_a_scattered_a_is_copied_into_gemm_order_and_no_table_is_left():
    """Sycamore's intermediates interleave M and K modes of extent 2: A is transposed once
    (a complex copy) so that the GEMM reads every group as one stride, without tables."""
    from einc.codegen.cuda.emit import _gett_groups, _transpose_axes, emit_step
    from einc.codegen.cuda.emit_skinny import skinny_layout
    for subs, shapes in [("aibjckdlemfnogphqruv,kjilmnopstw->gbacdqefhruvstw", [(2,) * 20, (2,) * 11]),
                         ("aibjckdlemfnogphqruv,ijklst->gabcdefhqrmnopuvts", [(2,) * 20, (2,) * 6])]:
        p = plan_for(subs, shapes, "complex64", backend="cuda")
        assert _rewritten(p) and len(p.steps[0].operands) == 1 and np.dtype(p.steps[0].compute).kind == "c"
        (gemm,) = [s for s in p.steps if s.strategy == "gett"]
        assert all(len(g) <= 1 for g in _gett_groups(gemm).values()), subs
        sk = skinny_layout(gemm, 1)
        assert ("tile", "skinny") not in gemm.config or not sk.rest
        # the copy moves contiguous runs as single modes, never 2 x 2 tiles of the transpose kernel
        copy = p.steps[0]
        assert len(copy.modes) < len(shapes[0])
        k = emit_step(p, copy)
        axes = _transpose_axes(copy)
        assert k.key[1] != "transpose" or min(copy.modes[j].extent for j in axes) >= 32


def test_small_and_reduction_steps_keep_the_complex_kernels():
    for subs, shapes in [("ij,jk->ik", [(8, 8), (8, 8)]), ("ij,ij->i", [(300, 200), (300, 200)]),
                         ("ij,jk->ik", [(64, 0), (0, 48)])]:
        for strategy in (None, "reduce"):
            p = plan_for(subs, shapes, "complex64", backend="cuda", strategy=strategy)
            assert not _rewritten(p) and all(np.dtype(s.compute).kind == "c" for s in p.steps)


def test_mixed_precision_and_real_steps_are_untouched():
    p = plan_for("ij,jk->ik", [(300, 200), (200, 100)], ["complex64", "float32"], backend="cuda")
    assert not _rewritten(p)
    p = plan_for("ij,jk->ik", [(300, 200), (200, 100)], "float32", backend="cuda")
    assert not _rewritten(p)


def test_generated_kernels_compile_with_nvrtc():
    """Every kernel of the rewritten plans (and the element-path twins) builds for sm_90."""
    pytest.importorskip("cuda.core")
    from cuda.core import Program, ProgramOptions
    from einc.codegen.cuda.emit import compile_options, emit_step
    seen = {}
    for subs, shapes, strategy in CASES:
        for dtype in DTYPES:
            p = plan_for(subs, shapes, dtype, backend="cuda", strategy=strategy)
            for s in p.steps:
                k = emit_step(p, s)
                while k is not None:
                    seen.setdefault(k.name, k)
                    k = k.fallback
    for name, k in seen.items():
        obj = Program(k.source, "c++", ProgramOptions(**compile_options(k.arch or "sm_90"))).compile("cubin")
        assert bytes(obj.code), name


# --- the graph path against the recording fake driver ----------------------------------------

@pytest.fixture
def spaced(fake):
    """The fake driver with handles 2**32 apart: an alias into a big fake allocation (M's
    second half) must not land on the next one's address."""
    def _id():
        fake.next_id += 1 << 32
        return fake.next_id
    fake._id = _id
    return fake


def _fake_executable(cu, subs, shapes, dtype):
    ex = xc.CudaExecutable(plan_for(subs, shapes, dtype, backend="cuda"), FakeRuntime(cu))
    cu.nptrs.update({int(l.fn): len(l.ptrs) for l, _ in ex.launchers})
    return ex


@pytest.mark.parametrize("subs,shapes", [CASES[0][:2], CASES[4][:2], CASES[6][:2]])
def test_fake_graph_replays_alias_and_const_pointers_like_direct_calls(spaced, subs, shapes):
    cu = spaced
    streams = [0, 0, 0, 0, 0x55, 0x55, 0]
    graph_ex = _fake_executable(cu, subs, shapes, "complex64")
    assert graph_ex._graphable and graph_ex._const_ptrs
    with_graphs = _calls(graph_ex, cu, graph_ex.plan, streams)
    xc.set_cuda_graphs(False)
    direct_ex = _fake_executable(cu, subs, shapes, "complex64")
    direct = _calls(direct_ex, cu, direct_ex.plan, streams)
    n = len(graph_ex.launchers)
    assert [k for _, _, k in with_graphs] == [["k"] * n] + [["g"]] * (len(streams) - 1)
    for (_, g, _), (_, d, _) in zip(with_graphs, direct):
        # the same kernels, caller pointers (plus the alias offsets) and intermediates; each
        # executable's own const upload is renamed like an intermediate, in the same place
        assert g == d
    assert graph_ex.graph_error is None and graph_ex.graph_builds == 2
    graph_ex.release_graphs()


def test_fake_alias_offsets_follow_moved_pointers(spaced):
    cu = spaced
    subs, shapes = CASES[0][:2]
    ex = _fake_executable(cu, subs, shapes, "complex64")
    s = ex.rt.stream(0)
    a, b, out = 0x100000, 0x200000, 0x300000
    ex([a, b], out, s)  # direct
    ex([a, b], out, s)  # builds the graph
    ex([a, b + 0x1000], out + 0x2000, s)  # B and C moved: their readers/writers are updated
    assert ex.graph_launches == 2 and ex.graph_updates > 0
    launched = [p for _, args in cu.log[-1][2] for p in args]
    assert b + 0x1000 + 4 in launched      # B's imaginary parts (the flip step)
    assert out + 0x2000 in launched         # the GEMM writes the caller's new output
    assert b not in launched and b + 4 not in launched and out not in launched
    assert set(ex._const_ptrs) <= set(launched)


# --- on the device -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def fresh_executables():
    einc.api._EXECUTABLES.clear()
    yield


def _cached_complex(shape, dtype):
    hits = [v for v in einc.api._EXECUTABLES.data.values()
            if isinstance(v, xc.CudaExecutable) and v.plan.out_shape == tuple(shape)
            and v.plan.out_dtype == np.dtype(dtype) and _rewritten(v.plan)]
    assert hits, f"no cached rewritten executable for {shape} {dtype}"
    return hits[-1]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subs,shapes,strategy", CASES, ids=IDS)
def test_gpu_torch_complex_matches_numpy_with_graph_replays(torch, fresh_executables, subs, shapes, strategy,
                                                            dtype):
    kept = []
    for call in range(4):  # direct, then graph replays with new inputs and outputs
        ops = _ops(shapes, dtype, seed=call)
        r = einc.einsum(subs, *[torch.from_numpy(o).cuda() for o in ops], strategy=strategy)
        kept.append(r)
        assert_matches(r.cpu().numpy(), subs, *ops, terms=_terms(subs, shapes))
    ex = _cached_complex(kept[0].shape, dtype)
    assert ex.graph_error is None
    if ex.temp_bytes <= xc.GRAPH_MAX_TEMP_BYTES:
        assert ex.graph_launches == 3 and ex.graph_updates >= 2  # calls 3 and 4 moved every pointer


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subs,shapes,strategy", CASES[:4] + CASES[6:7], ids=IDS[:4] + IDS[6:7])
def test_gpu_numpy_and_cupy_operands(subs, shapes, strategy, dtype):
    for call in range(3):
        ops = _ops(shapes, dtype, seed=10 + call)
        assert_matches(einc.einsum(subs, *ops, backend="cuda", strategy=strategy), subs, *ops,
                       terms=_terms(subs, shapes))
    cupy = pytest.importorskip("cupy")
    for call in range(3):
        ops = _ops(shapes, dtype, seed=20 + call)
        r = einc.einsum(subs, *[cupy.asarray(o) for o in ops], strategy=strategy)
        assert isinstance(r, cupy.ndarray)
        assert_matches(cupy.asnumpy(r), subs, *ops, terms=_terms(subs, shapes))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_non_contiguous_operands_and_output(torch, dtype):
    tdt = {"complex64": torch.complex64, "complex128": torch.complex128}[dtype]
    for call in range(3):
        a = torch.randn(600, 400, dtype=tdt, device="cuda")[::2, 1::2]     # (300, 200), strided
        b = torch.randn(300, 200, dtype=tdt, device="cuda").t()[:, ::3]    # (200, 100), transposed
        out = torch.full((100, 300), complex(float("nan"), 0), dtype=tdt, device="cuda").t()
        r = einc.einsum("ij,jk->ik", a, b, out=out)
        assert r.data_ptr() == out.data_ptr()
        assert_matches(out.cpu().numpy(), "ij,jk->ik", a.cpu().numpy(), b.cpu().numpy(), terms=200)


@pytest.mark.gpu
def test_gpu_k_zero_and_special_values(torch):
    a = torch.zeros((64, 0), dtype=torch.complex64, device="cuda")
    b = torch.zeros((0, 48), dtype=torch.complex64, device="cuda")
    for strategy in (None, "gett"):
        r = einc.einsum("ij,jk->ik", a, b, strategy=strategy)
        assert r.shape == (64, 48) and not r.abs().cpu().numpy().any()
    ops = _ops([(300, 200), (200, 100)], "complex64", seed=5)
    ops[0][3, 7] = complex(np.inf, 0)
    ops[1][11, 9] = complex(0, np.nan)
    # numpy's loop nest (optimize=False) is the rule: its BLAS path (optimize=True) turns the
    # inf row into NaN (zgemm), the naive complex product keeps inf
    ref = np.einsum("ij,jk->ik", *[o.astype(np.complex128) for o in ops], optimize=False)
    for _ in range(3):
        r = einc.einsum("ij,jk->ik", *[torch.from_numpy(o).cuda() for o in ops]).cpu().numpy()
        np.testing.assert_array_equal(np.isnan(r), np.isnan(ref))
        np.testing.assert_array_equal(np.isinf(r.real), np.isinf(ref.real))
        np.testing.assert_array_equal(np.isinf(r.imag), np.isinf(ref.imag))
        fin = np.isfinite(ref)
        np.testing.assert_allclose(r[fin], ref[fin], rtol=1e-4, atol=1e-4 * np.abs(ref[fin]).max())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_executable_with_moving_pointers_and_streams(torch, dtype):
    from einc.runtime.cuda import runtime
    subs, shapes = CASES[0][:2]
    rt = runtime()
    rt.make_current()
    ex = xc.CudaExecutable(plan_for(subs, shapes, dtype, backend="cuda"), rt)
    sets = [_ops(shapes, dtype, seed=30 + k) for k in range(3)]
    dev = [[torch.from_numpy(o).cuda() for o in ops] for ops in sets]
    tdt = {"complex64": torch.complex64, "complex128": torch.complex128}[dtype]
    outs = [torch.full((300, 100), complex(float("nan"), 0), dtype=tdt, device="cuda") for _ in range(4)]
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    for call in range(9):
        k, o = call % 3, (call * 5) % 4
        s = side if call % 4 == 3 else torch.cuda.current_stream()
        ex([t.data_ptr() for t in dev[k]], outs[o].data_ptr(), rt.stream(s.cuda_stream))
        s.synchronize()
        assert_matches(outs[o].cpu().numpy(), subs, *sets[k], terms=200)
        outs[o].fill_(complex(float("nan"), 0))
        torch.cuda.synchronize()
    assert ex.graph_error is None and ex.graph_launches == 8 and ex.graph_builds == 2


# --- the CUDA kernels themselves, on test_cuda_codegen's CPU emulator ----------------------

EMULATED = [  # (subscripts, shapes, dtype, strategy): copy, flip, GEMM kernels of the rewrite
    ("ij,jk->ik", [(40, 24), (24, 20)], "complex64", "gett"),          # gett on the real view
    ("ij,jk->ki", [(36, 20), (20, 28)], "complex128", "gett"),         # C unit-stride along M: swapped
    ("ik,kj->ij", [(5000, 7), (7, 3)], "complex64", None),             # skinny, N' = 6
    ("aibjckdlemfnogph,kjilmnopqr->gbacdefhqr", [(2,) * 16, (2,) * 10], "complex64", "gett"),  # A copied
]


def _emulate_with_aliases(p, arrays, max_grid=3):
    """test_cuda_codegen.emulate, plus alias buffers (a root's bytes from an offset) and consts."""
    from einc.codegen.cuda.emit import emit_step
    from test_cuda_codegen import _emulable, _emulated
    bufs = {}
    for i, b in enumerate(p.buffers):
        if b.role == "input":
            bufs[i] = np.ascontiguousarray(arrays[b.index]).reshape(-1).view(np.uint8)
        elif b.role == "temp":
            bufs[i] = np.full(max(b.size, 1), 77, dtype=b.dtype).view(np.uint8)
        elif b.role == "const":
            bufs[i] = np.array(b.data, dtype=b.dtype).view(np.uint8)
    out = np.empty(p.out_shape, dtype=p.out_dtype)
    out.reshape(-1).view(np.uint8)[...] = 0x7B  # poison: every element must be written
    bufs[p.output] = out.reshape(-1).view(np.uint8)
    ptr = {i: b.ctypes.data for i, b in bufs.items()}
    for i, (w, off) in xc.alias_roots(p).items():
        ptr[i] = ptr[w] + off
    for step in p.steps:
        k = _emulable(emit_step(p, step))
        lib = _emulated(k, 1 + len(step.operands))
        tables = [np.ascontiguousarray(t, dtype=np.int64) for t in k.tables]
        meta = ctypes.create_string_buffer(k.meta([t.ctypes.data for t in tables]), k.meta_size)
        order = (step.result, *step.operands)
        ptrs = (ctypes.c_void_p * len(order))(*[ptr[b] for b in order])
        lib.emu_launch(ptrs, ctypes.addressof(meta), min(k.grid[0], max_grid), k.block[0])
    return out


@pytest.mark.parametrize("subs,shapes,dtype,strategy", EMULATED, ids=[c[0] for c in EMULATED])
def test_emulated_rewrite_kernels_match_numpy(subs, shapes, dtype, strategy):
    from test_cuda_codegen import _emulator_available
    if not _emulator_available():
        pytest.skip("needs g++ with C++20 and _Float16")
    p = plan_for(subs, shapes, dtype, backend="cuda", strategy=strategy)
    assert _rewritten(p)
    ops = _ops(shapes, dtype, seed=7)
    assert_matches(_emulate_with_aliases(p, ops), subs, *ops, terms=_terms(subs, shapes))
