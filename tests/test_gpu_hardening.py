"""Faults on the CUDA backend: out of memory, NVRTC failures, launch failures, threads and
streams, and tensors past 2**31 elements.

The first half runs anywhere: NVRTC works without a device, and the runtime's error and
clean-up paths run against test_cuda_graphs' recording fake driver, here made to fail on
purpose. The second half (marked gpu) does the same on the device, and skips without one.
"""
from __future__ import annotations

import dataclasses
import os
import re
import threading
import time

import numpy as np
import pytest

import einc
import einc.api as api
import einc.codegen.cuda.emit as cuda_emit
import einc.execute_cuda as xc
from einc.api import plan_for
from einc.errors import EincCompileError, EincCudaError
from oracle import assert_matches
from test_cuda_graphs import FakeDriver, FakeRuntime

CHAIN4 = ("ij,jk,kl,lm->im", [(40, 50), (50, 60), (60, 30), (30, 20)])  # two intermediates


def _broken(kernel):
    """The kernel with a syntax error NVRTC must report (and a key no cache has seen)."""
    return dataclasses.replace(kernel, source=kernel.source + "\nint einc_oops = ;\n",
                               key=tuple(kernel.key) + ("broken",))


def _assert_compile_error(e: EincCompileError, kernel_source_end="int einc_oops = ;"):
    assert "error" in e.log and "einc_oops" in e.log  # NVRTC's log, with the offending line
    assert e.source_path and os.path.isfile(e.source_path)
    text = open(e.source_path).read()
    assert text.rstrip().endswith(kernel_source_end) and "__global__" in text
    assert e.source_path in str(e) and e.log in str(e)


def test_nvrtc_failure_carries_log_and_source_path(tmp_path, monkeypatch):
    from einc.runtime.cuda import compile_cubin
    monkeypatch.setenv("EINC_CACHE_DIR", str(tmp_path))
    plan = plan_for("ij,jk->ik", [(64, 32), (32, 16)], "float32", backend="cuda")
    good = cuda_emit.emit_step(plan, plan.steps[0], "sm_90")
    bad = _broken(good)
    with pytest.raises(EincCompileError) as info:
        compile_cubin(bad.source, bad.name, cuda_emit.compile_options("sm_90"))
    _assert_compile_error(info.value)
    assert str(tmp_path) in info.value.source_path
    other = dataclasses.replace(bad, source=bad.source + "// a second failure\n")
    with pytest.raises(EincCompileError) as again:
        compile_cubin(other.source, other.name, cuda_emit.compile_options("sm_90"))
    assert again.value.source_path != info.value.source_path  # one file per failing source
    assert open(info.value.source_path).read() == bad.source


def test_nvrtc_failure_source_lands_somewhere_when_the_cache_is_unwritable(tmp_path, monkeypatch):
    from einc.runtime.cuda import compile_cubin
    plan = plan_for("ij->j", [(16, 8)], "float32", backend="cuda")
    bad = _broken(cuda_emit.emit_step(plan, plan.steps[0], "sm_90"))
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("EINC_CACHE_DIR", str(blocker))
    with pytest.raises(EincCompileError) as info:
        compile_cubin(bad.source, bad.name, cuda_emit.compile_options("sm_90"))
    _assert_compile_error(info.value)


# --- the runtime's fault paths against a fake driver ------------------------------------

class FaultyDriver(FakeDriver):
    """FakeDriver that fails chosen calls and counts allocations and frees."""

    def __init__(self, drv):
        super().__init__(drv)
        self.live = set()
        self.allocs = 0  # cuMemAllocAsync calls, failed ones too
        self.free_bytes, self.total_bytes = 3 << 30, 80 << 30
        self.oom_after = None  # cuMemAllocAsync calls that succeed before one runs out of memory
        self.launch_fail_at = None  # index of the cuLaunchKernel call that fails

    def cuMemAllocAsync(self, n, stream):
        self.allocs += 1
        if self.oom_after is not None:
            if self.oom_after == 0:
                self.oom_after = None
                return self._d.CUresult.CUDA_ERROR_OUT_OF_MEMORY, None
            self.oom_after -= 1
        err, p = super().cuMemAllocAsync(n, stream)
        self.live.add(int(p))
        return err, p

    def cuMemFreeAsync(self, p, stream):
        self.live.remove(int(p))
        return (self.ok,)

    def cuMemGetInfo(self):
        return self.ok, self.free_bytes, self.total_bytes

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        return (self.ok,)

    def cuLaunchKernel(self, fn, *args):
        n = len([x for x in self.log if x[0] == "k"])
        if self.launch_fail_at is not None and n == self.launch_fail_at:
            self.launch_fail_at = None
            self.log.append(("failed", 0, []))
            return (self._d.CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,)
        self.log.append(("k", int(args[6]), [(int(fn), ())]))
        return (self.ok,)


class FaultyRuntime(FakeRuntime):
    from einc.runtime.cuda import CudaRuntime as _R
    download = _R.download

    def __init__(self, cu, compile=False):
        super().__init__(cu)
        self.compile = compile

    def function(self, kernel, options):
        if self.compile:  # really run NVRTC, then hand back a fake function
            from einc.runtime.cuda import compile_cubin
            compile_cubin(kernel.source, kernel.name, dict(options, arch=kernel.arch or options["arch"]))
        return super().function(kernel, options)


@pytest.fixture
def faulty(monkeypatch):
    driver = pytest.importorskip("cuda.bindings.driver")
    import einc.runtime.cuda as rc
    cu = FaultyDriver(driver)
    rt = FaultyRuntime(cu)
    monkeypatch.setattr(rc, "_driver", lambda: cu)
    monkeypatch.setattr(rc, "_LAUNCH", False)
    monkeypatch.setattr(rc, "_GRAPH_LAUNCH", False)
    monkeypatch.setattr(rc, "_IS_CAPTURING", False)
    monkeypatch.setattr(rc, "_SYNC_EACH_STEP", False)
    monkeypatch.setattr(rc, "runtime", lambda ordinal=0: rt)
    monkeypatch.setattr(xc, "_GRAPHS", [False])  # direct launches: every call allocates
    api._EXECUTABLES.clear()
    yield cu, rt
    api._EXECUTABLES.clear()  # never leave fake executables for a real device run


def _fake_executable(rt, subs, shapes):
    ex = xc.CudaExecutable(plan_for(subs, shapes, "float32", backend="cuda"), rt)
    rt.cu.nptrs.update({int(l.fn): len(l.ptrs) for l, _ in ex.launchers})
    return ex


def test_out_of_memory_names_sizes_and_frees_what_it_took(faulty):
    cu, rt = faulty
    ex = _fake_executable(rt, *CHAIN4)
    temps = [n for _, n in ex.temps]
    assert len(temps) == 2
    cu.oom_after = 1  # the first intermediate fits, the second does not
    with pytest.raises(EincCudaError, match=rf"device out of memory: asked for {temps[1]} bytes, "
                                            rf"{3 << 30} of {80 << 30} free"):
        ex([0x1000, 0x2000, 0x3000, 0x4000], 0x5000, rt.stream(0))
    assert not cu.live  # the intermediate that was allocated is freed again
    ex([0x1000, 0x2000, 0x3000, 0x4000], 0x5000, rt.stream(0))  # the next call works
    assert not cu.live and [k for k, _, _ in cu.log].count("k") == len(ex.launchers)


def test_launch_failure_names_the_step_and_frees_intermediates(faulty):
    cu, rt = faulty
    ex = _fake_executable(rt, *CHAIN4)
    cu.launch_fail_at = 1
    with pytest.raises(EincCudaError, match=r"launching step 1 \(.*->.*, strategy=\w+, kernel einc_\w+\)"
                                            r".*CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"):
        ex([0x1000, 0x2000, 0x3000, 0x4000], 0x5000, rt.stream(0))
    assert not cu.live
    ex([0x1000, 0x2000, 0x3000, 0x4000], 0x5000, rt.stream(0))
    assert not cu.live


def test_numpy_operands_uploads_are_freed_on_out_of_memory(faulty):
    cu, rt = faulty
    subs, shapes = CHAIN4
    ops = [np.ones(s, np.float32) for s in shapes]
    cu.oom_after = 5  # four uploads and the result buffer fit; the first intermediate does not
    with pytest.raises(EincCudaError, match="device out of memory: asked for"):
        einc.einsum(subs, *ops, backend="cuda")
    assert not cu.live
    einc.einsum(subs, *ops, backend="cuda")  # runs (on the fake: no numbers to check)
    assert not cu.live


def test_memory_limit_refusal_allocates_nothing_on_the_device(faulty):
    cu, rt = faulty
    ops = [np.ones((2, 300), np.float32), np.ones((300, 300), np.float32), np.ones((300, 2), np.float32)]
    with pytest.raises(einc.EincValueError, match="memory_limit=100 allows 100 bytes"):
        einc.einsum("ij,jk,kl->il", *ops, backend="cuda", optimize=[(0, 1), (0, 1)], memory_limit=100)
    assert cu.allocs == 0 and not cu.log


def test_nvrtc_failure_through_einsum_then_recovery(faulty, monkeypatch):
    cu, rt = faulty
    rt.compile = True
    real = cuda_emit.emit_step
    monkeypatch.setattr(cuda_emit, "emit_step", lambda *a, **k: _broken(real(*a, **k)))
    a = np.ones((16, 24), np.float32)
    with pytest.raises(EincCompileError) as info:
        einc.einsum("ij,jk->ik", a, a.T, backend="cuda")
    _assert_compile_error(info.value)
    assert not cu.live  # the uploads are freed
    monkeypatch.setattr(cuda_emit, "emit_step", real)
    einc.einsum("ij,jk->ik", a, a.T, backend="cuda")  # the fixed emitter compiles and runs
    assert not cu.live


def test_driver_errors_read_without_a_description():
    import einc.runtime.cuda as rc
    driver = pytest.importorskip("cuda.bindings.driver")

    class NoStrings:
        CUresult = driver.CUresult

        def cuGetErrorString(self, err):
            raise RuntimeError("no driver")
    real = rc._driver
    rc._driver = lambda: NoStrings()
    try:
        with pytest.raises(EincCudaError, match="cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"):
            rc.check((driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY, None), "cuMemAlloc")
    finally:
        rc._driver = real


# --- on the device -----------------------------------------------------------------------

gpu = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch():
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return t


def _pool_used(rt):
    cu = rt.cu
    pool = rt.cu.cuDeviceGetDefaultMemPool(rt.device)[1]
    err, used = cu.cuMemPoolGetAttribute(pool, cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    return int(used)


@gpu
def test_gpu_out_of_memory_is_an_einc_error_and_leaks_nothing(torch):
    from einc.runtime.cuda import runtime
    rt = runtime(0)
    rt.make_current()
    free, total = torch.cuda.mem_get_info()
    n = int((2 * total / 4) ** 0.5) + 1  # an (n, n) float32 intermediate: twice the device
    a, b, c = (np.ones((n, 1), np.float32), np.ones((1, n), np.float32), np.ones((n, 1), np.float32))
    torch.cuda.synchronize()
    used, torch_used = _pool_used(rt), torch.cuda.memory_allocated()
    with pytest.raises(EincCudaError, match=rf"device out of memory: asked for {n * n * 4} bytes, \d+ of \d+ free"):
        einc.einsum("ij,jk,kl->il", a, b, c, backend="cuda", optimize=[(0, 1), (0, 1)])
    ta, tb, tc = (torch.from_numpy(x).cuda() for x in (a, b, c))
    with pytest.raises(EincCudaError, match=rf"asked for {n * n * 4} bytes"):
        einc.einsum("ij,jk,kl->il", ta, tb, tc, optimize=[(0, 1), (0, 1)])
    del ta, tb, tc
    import gc
    gc.collect()  # (a traceback kept alive would keep the failed call's result tensor)
    torch.cuda.synchronize()
    assert _pool_used(rt) == used and torch.cuda.memory_allocated() == torch_used
    small = [np.arange(12, dtype=np.float32).reshape(3, 4), np.ones((4, 5), np.float32), np.ones((5, 2), np.float32)]
    assert_matches(einc.einsum("ij,jk,kl->il", *small, backend="cuda", optimize=[(0, 1), (0, 1)]),
                   "ij,jk,kl->il", *small, terms=20)


@gpu
def test_gpu_nvrtc_failure_then_recovery(torch, monkeypatch):
    real = cuda_emit.emit_step
    monkeypatch.setattr(cuda_emit, "emit_step", lambda *a, **k: _broken(real(*a, **k)))
    x = torch.randn(37, 29, device="cuda", dtype=torch.float64)
    with pytest.raises(EincCompileError) as info:
        einc.einsum("ij,kj->ik", x, x)
    _assert_compile_error(info.value)
    monkeypatch.setattr(cuda_emit, "emit_step", real)
    assert_matches(einc.einsum("ij,kj->ik", x, x).cpu().numpy(), "ij,kj->ik", x.cpu().numpy(), x.cpu().numpy(),
                   terms=29)


@gpu
def test_gpu_launch_failure_names_the_step_and_the_next_call_works(torch):
    x = torch.randn(300, 200, device="cuda")
    einc.einsum("ij->j", x)
    ex = next(e for e in list(api._EXECUTABLES.data.values()) if isinstance(e, xc.CudaExecutable)
              and e.plan.bound.spec.text == "ij->j" and e.plan.bound.inputs[0].extents == (300, 200))
    launch = ex.launchers[0][0]
    block = launch.block
    launch.block = (2048, 1, 1)  # more threads than a block may have: the launch is refused
    try:
        with pytest.raises(EincCudaError, match=r"launching step 0 \(ij->j, strategy=reduce, kernel einc_\w+"):
            einc.einsum("ij->j", x)
    finally:
        launch.block = block
    np.testing.assert_allclose(einc.einsum("ij->j", x).cpu().numpy(), x.cpu().numpy().sum(0), rtol=1e-5, atol=1e-4)


def _run_threads(target, n, deadline=300):
    from test_concurrency import run_threads
    run_threads(target, n=n, deadline=deadline)


@gpu
def test_gpu_threads_on_their_own_streams(torch):
    """12 threads x 50 calls, each thread on its own torch stream, results checked after all
    its launches are queued (so streams overlap); multi-step plans replay CUDA graphs, one
    per stream, beyond GRAPH_MAX_STREAMS (8) some are evicted while others replay."""
    cases = [("ij,jk->ik", [(96, 80), (80, 72)]), ("ij,jk,kl->il", [(64, 64), (64, 64), (64, 64)]),
             ("bij,bjk->bik", [(4, 33, 17), (4, 17, 29)]), ("ij,ij->i", [(500, 300), (500, 300)]),
             ("ij->j", [(700, 33)]), ("ij,jk->ik", [(64, 8192), (8192, 64)]), ("i,i->", [(1 << 18,), (1 << 18,)])]

    def work(i):
        rng = np.random.default_rng(500 + i)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            pending = []
            for c in range(50):
                subs, shapes = cases[(i + c) % len(cases)]
                host = [rng.standard_normal(sh).astype(np.float32) for sh in shapes]
                dev = [torch.from_numpy(h).to("cuda", non_blocking=False) for h in host]
                pending.append((subs, host, einc.einsum(subs, *dev)))
                if c % 10 == 9:  # numpy operands too, through the legacy stream
                    pending.append((subs, host, einc.einsum(subs, *host, backend="cuda")))
            s.synchronize()
        for subs, host, got in pending:
            got = got.cpu().numpy() if hasattr(got, "cpu") else got
            assert_matches(got, subs, *host, terms=8192)
    _run_threads(work, 12)


@gpu
def test_gpu_same_new_expression_from_many_threads(torch):
    shapes = [(45, 31, 7), (31, 7, 23)]  # a structure no other test compiles

    def work(i):
        rng = np.random.default_rng(600 + i)
        s = torch.cuda.Stream()
        for _ in range(10):
            host = [rng.standard_normal(sh) for sh in shapes]
            with torch.cuda.stream(s):
                got = einc.einsum("ijk,jkl->il", *[torch.from_numpy(h).cuda() for h in host])
                s.synchronize()
            assert_matches(got.cpu().numpy(), "ijk,jkl->il", *host, terms=217)
    _run_threads(work, 8)


# --- tensors past 2**31 elements (64-bit offsets) -------------------------------------------

BIG = (1 << 31) + 5


def _pattern(torch, n, p, dtype, rows=None):
    """``arange(n) % p`` on the device, built in chunks (an int64 arange of 2**31 is 16 GiB)."""
    out = torch.empty(n, dtype=dtype, device="cuda")
    chunk = 1 << 27
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        out[s:e] = (torch.arange(s, e, device="cuda", dtype=torch.int64) % p).to(dtype)
    return out


def _need(torch, nbytes):
    free, _ = torch.cuda.mem_get_info()
    if free < nbytes:
        pytest.skip(f"needs {nbytes >> 30} GiB of free device memory, {free >> 30} GiB free")


def _free(torch):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


@gpu
@pytest.mark.slow
def test_gpu_sum_of_more_than_2_31_elements(torch):
    _need(torch, 8 << 30)
    x = _pattern(torch, BIG, 7, torch.int8)
    x[-3:] = 100  # the last elements are unlike anything a wrapped 32-bit offset would read
    expected = (BIG // 7) * 21 + sum(range(BIG % 7)) - sum(k % 7 for k in range(BIG - 3, BIG)) + 300
    got = einc.einsum("i->", x, dtype=np.int64)
    assert int(got) == expected
    del x
    _free(torch)


@gpu
@pytest.mark.slow
def test_gpu_row_dot_over_more_than_2_31_elements(torch):
    R, J = (1 << 16) + 5, 1 << 15  # rows 65536.. start past element 2**31
    _need(torch, 10 << 30)
    a = _pattern(torch, R * J, 7, torch.int8).view(R, J)
    b = _pattern(torch, R * J, 3, torch.int8).view(R, J)
    got = einc.einsum("ij,ij->i", a, b, dtype=np.int64).cpu().numpy()
    # row r's inputs depend on r only through r*J mod 21: numpy computes the first 21 rows
    flat = np.arange(21 * J, dtype=np.int64).reshape(21, J)
    period = np.einsum("ij,ij->i", flat % 7, flat % 3)
    np.testing.assert_array_equal(got, period[np.arange(R) % 21])
    del a, b
    _free(torch)


def _periodic_gemm(K, M, N, period):
    """C = A @ B for A = (flat % 7) (M, K), B = (flat % 3) (K, N), with both periodic in k."""
    ka = np.arange(M)[:, None] * K + np.arange(period)[None, :]
    kb = np.arange(period)[:, None] * N + np.arange(N)[None, :]
    full = (ka % 7) @ (kb % 3)
    r = K % period
    rest = (ka[:, :r] % 7) @ (kb[:r] % 3)
    return (K // period) * full + rest


@gpu
@pytest.mark.slow
def test_gpu_gemm_with_a_long_k_past_2_31_elements(torch):
    M, N, K = 64, 64, (1 << 25) + 7  # A and B each hold 2**31 + 448 elements
    _need(torch, 16 << 30)
    a = _pattern(torch, M * K, 7, torch.int8).view(M, K)
    b = _pattern(torch, K * N, 3, torch.int8).view(K, N)
    got = einc.einsum("ij,jk->ik", a, b, dtype=np.int32).cpu().numpy()
    np.testing.assert_array_equal(got, _periodic_gemm(K, M, N, 21).astype(np.int32))
    del a, b
    _free(torch)


@gpu
@pytest.mark.slow
def test_gpu_gemm_with_a_tall_m_past_2_31_elements(torch):
    M, K, N = (1 << 25) + 3, 64, 16  # A holds 2**31 + 192 elements, C 2**29
    _need(torch, 16 << 30)
    a = _pattern(torch, M * K, 7, torch.int8).view(M, K)
    bh = (np.arange(K * N) % 3).astype(np.int8).reshape(K, N)
    got = einc.einsum("ij,jk->ik", a, torch.from_numpy(bh).cuda(), dtype=np.int32)
    # row i of A depends on i only through 64 i mod 7: numpy computes seven rows
    rows = (np.arange(7)[:, None] * K + np.arange(K)[None, :]) % 7
    period = (rows @ bh.astype(np.int64)).astype(np.int32)
    step = 1 << 22
    for s in range(0, M, step):  # compared in slices: the whole C is 2 GiB
        e = min(M, s + step)
        np.testing.assert_array_equal(got[s:e].cpu().numpy(), period[np.arange(s, e) % 7])
    del a, got
    _free(torch)


@gpu
@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["int8", "float16"])
def test_gpu_outer_product_writes_past_2_31_elements(torch, dtype):
    I, J = (1 << 16) + 3, (1 << 15) + 1  # the output holds 2**31 + 163843 elements
    tdt = getattr(torch, dtype)
    _need(torch, I * J * 2 * np.dtype(dtype).itemsize + (2 << 30))
    a = _pattern(torch, I, 7, tdt)
    b = _pattern(torch, J, 5, tdt)
    got = einc.einsum("i,j->ij", a, b)
    assert tuple(got.shape) == (I, J) and got.dtype == tdt
    ah, bh = (np.arange(I) % 7).astype(dtype), (np.arange(J) % 5).astype(dtype)
    step = 1 << 12
    for s in range(0, I, step):  # numpy on each slice of rows, the last ones past 2**31
        e = min(I, s + step)
        np.testing.assert_array_equal(got[s:e].cpu().numpy(), np.multiply.outer(ah[s:e], bh))
    del a, b, got
    _free(torch)
