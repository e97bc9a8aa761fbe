"""CUDA graph replay of multi-step plans (einc/execute_cuda.py).

The first half runs anywhere: the decision logic, the argument bookkeeping, the node
parameter struct, and the whole graph path against a recording fake driver (which copies
kernel arguments when a node is added or updated, as the real one does). The second half
(marked gpu) runs the real thing against numpy.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import einc
import einc.execute_cuda as xc
from einc.api import plan_for
from einc.errors import EincCudaError
from oracle import assert_matches

CHAIN3 = ("ij,jk,kl->il", [(64, 64), (64, 64), (64, 64)])
CHAIN4 = ("ij,jk,kl,lm->im", [(40, 50), (50, 60), (60, 30), (30, 20)])
SPLITK = ("lki,kjl->ji", [(64, 64, 200), (64, 150, 64)])  # split-K: K slices + a reduce step
MULTI = [CHAIN3, CHAIN4, SPLITK]
TERMS = {CHAIN3[0]: 128, CHAIN4[0]: 150, SPLITK[0]: 64 * 64}  # summed terms, for the tolerance


# --- pure logic ------------------------------------------------------------------------

def test_graph_wanted_only_for_repeated_multi_launch_calls():
    ok = dict(enabled=True, sync_each_step=False)
    assert xc.graph_wanted(2, 1 << 20, 1, **ok)
    assert xc.graph_wanted(5, 0, 10, **ok)
    assert not xc.graph_wanted(1, 0, 10, **ok)                       # one launch: nothing to save
    assert not xc.graph_wanted(3, 1 << 20, 0, **ok)                   # first call: no build cost
    assert not xc.graph_wanted(3, xc.GRAPH_MAX_TEMP_BYTES + 1, 5, **ok)  # huge intermediates
    assert not xc.graph_wanted(3, 0, 5, enabled=False, sync_each_step=False)  # EINC_CUDA_GRAPHS=0
    assert not xc.graph_wanted(3, 0, 5, enabled=True, sync_each_step=True)    # EINC_CUDA_SYNC=1


def test_graph_switches():
    assert not xc.graphs_enabled_from_env({"EINC_CUDA_GRAPHS": "0"})
    assert not xc.graphs_enabled_from_env({"EINC_CUDA_GRAPHS": " 0 "})
    assert xc.graphs_enabled_from_env({"EINC_CUDA_GRAPHS": "1"})
    assert xc.graphs_enabled_from_env({})
    before = xc.cuda_graphs_enabled()
    try:
        assert xc.set_cuda_graphs(False) == before
        assert not xc.cuda_graphs_enabled()
        assert xc.set_cuda_graphs(True) is False
        assert xc.cuda_graphs_enabled()
    finally:
        xc.set_cuda_graphs(before)


@pytest.mark.parametrize("subs,shapes", MULTI)
def test_arg_sources_cover_every_pointer(subs, shapes):
    plan = plan_for(subs, shapes, "float32", backend="cuda")
    assert len(plan.steps) >= 2
    srcs = xc.arg_sources(plan)
    assert len(srcs) == len(plan.steps)
    written = set()
    for step, s in zip(plan.steps, srcs):
        assert len(s) == 1 + len(step.operands)
        for kind, e in s[1:]:  # operands: caller's inputs, or temps an earlier step wrote
            assert (kind == "ext" and 0 <= e < len(shapes)) or (kind == "temp" and e in written)
        kind, e = s[0]
        assert kind == "temp" or (kind, e) == ("ext", -1)
        if kind == "temp":
            written.add(e)
    assert srcs[-1][0] == ("ext", -1)  # the last step writes the caller's output


def test_changed_nodes_touch_only_moved_pointers():
    plan = plan_for(*CHAIN3, "float32", backend="cuda")
    slots = xc.ext_slots(xc.arg_sources(plan))
    base = (100, 200, 300, 900)  # operands 0, 1, 2, then the output
    assert xc.changed_nodes(slots, base, base) == []
    assert xc.changed_nodes(slots, base, (100, 200, 300, 901)) == [len(plan.steps) - 1]
    readers_of_0 = [n for n, s in enumerate(slots) if any(e == 0 for _, e in s)]
    assert xc.changed_nodes(slots, base, (101, 200, 300, 900)) == readers_of_0
    assert xc.changed_nodes(slots, base, (-1, -1, -1, -1)) == [n for n, s in enumerate(slots) if s]


class _FakeLaunch:
    def __init__(self, fn):
        self.fn, self.grid, self.block, self.smem = fn, (7, 2, 1), (256, 1, 1), 99


def test_kernel_node_params_layout():
    """CUDA_KERNEL_NODE_PARAMS(_v2) as the driver reads it: func, grid, block, smem, kernelParams."""
    driver = pytest.importorskip("cuda.bindings.driver")
    args = (ctypes.c_void_p * 2)(1, 2)
    p = xc.kernel_node_params(driver, _FakeLaunch(driver.CUfunction(0x1234)), ctypes.addressof(args))
    raw = (ctypes.c_uint32 * 18).from_address(p.getPtr())
    words = (ctypes.c_uint64 * 9).from_address(p.getPtr())
    assert words[0] == 0x1234                       # func
    assert list(raw[2:9]) == [7, 2, 1, 256, 1, 1, 99]  # grid, block, sharedMemBytes
    assert words[5] == ctypes.addressof(args)       # kernelParams (after 4 bytes of padding)
    assert words[6] == words[7] == words[8] == 0    # extra, kern, ctx: NULL


# --- the graph path against a recording fake driver -------------------------------------

class FakeDriver:
    """Just enough of cuda.bindings.driver to run CudaExecutable, recording what runs.

    Kernel nodes copy their arguments when added or updated (as the driver does); a graph
    launch logs every kernel node with the arguments its instantiation holds.
    """

    def __init__(self, drv):
        self._d = drv
        for name in ("CUresult", "CUstream", "CUdeviceptr", "CUstreamCaptureStatus",
                     "CUDA_KERNEL_NODE_PARAMS", "CUDA_MEM_ALLOC_NODE_PARAMS", "CUDA_MEMSET_NODE_PARAMS",
                     "CUmemAllocationType", "CUmemLocationType", "CUtensorMapDataType",
                     "CUtensorMapInterleave", "CUtensorMapSwizzle", "CUtensorMapL2promotion",
                     "CUtensorMapFloatOOBfill", "cuuint32_t", "cuuint64_t"):
            setattr(self, name, getattr(drv, name))
        self.ok = drv.CUresult.CUDA_SUCCESS
        self.next_id = 0x10000
        self.nptrs = {}      # function handle -> number of pointer arguments
        self.functions = {}  # kernel key -> CUfunction
        self.log = []        # ("k"|"g", stream, [(func, ptrs), ...])
        self.graphs, self.nodes, self.execs = {}, {}, {}
        self.fail = {}       # driver function name -> how many more calls fail
        self.calls = {}
        self.capturing = set()  # stream handles being captured (torch.cuda.graph, ...)
        self.ntmaps = {}     # function handle -> tensor maps after its metadata
        self.encoded = []    # cuTensorMapEncodeTiled calls: (address, dims, box)

    def _id(self):
        self.next_id += 0x1000
        return self.next_id

    def _failing(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1
        if self.fail.get(name, 0) > 0:
            self.fail[name] -= 1
            return True
        return False

    def _args(self, fn, addr):
        n = self.nptrs[int(fn)]
        t = self.ntmaps.get(int(fn), 0)  # tensor maps: the parameter after the metadata
        arr = (ctypes.c_void_p * (n + 1 + (t > 0))).from_address(addr)
        ptrs = tuple(ctypes.c_void_p.from_address(arr[i]).value or 0 for i in range(n))
        return ptrs + tuple(ctypes.c_uint64.from_address(arr[n + 1] + 128 * i).value for i in range(t))

    def cuTensorMapEncodeTiled(self, dt, rank, ptr, dims, strides, box, estrides, il, swizzle, l2, oob):
        """A fake map whose first word is the address it maps (what the tests follow)."""
        dims, strides, box = ([int(x) for x in v] for v in (dims, strides, box))  # cuuint32/64_t
        assert rank == len(dims) == len(box) == len(strides) + 1 and all(s % 16 == 0 for s in strides)
        assert swizzle == self._d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
        self.encoded.append((int(ptr), tuple(dims), tuple(box)))
        return self.ok, type("FakeTmap", (), {"opaque": [int(ptr)] + [0] * 15})()

    # runtime
    def cuGetErrorString(self, err):
        return self.ok, b"fake failure"

    def cuStreamSynchronize(self, stream):
        return (self.ok,)

    def cuStreamIsCapturing(self, stream):
        status = self._d.CUstreamCaptureStatus
        return self.ok, (status.CU_STREAM_CAPTURE_STATUS_ACTIVE if int(stream) in self.capturing
                         else status.CU_STREAM_CAPTURE_STATUS_NONE)

    def cuMemAlloc(self, n):
        return self.ok, self._d.CUdeviceptr(self._id())

    def cuMemFree(self, p):
        return (self.ok,)

    def cuMemAllocAsync(self, n, stream):
        return self.ok, self._d.CUdeviceptr(self._id())

    def cuMemFreeAsync(self, p, stream):
        return (self.ok,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        return (self.ok,)

    def cuMemsetD8Async(self, dst, value, n, stream):
        self.log.append(("z", int(stream), int(dst), value, n))
        return (self.ok,)

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self.log.append(("k", int(stream), [(int(fn), self._args(fn, params))]))
        return (self.ok,)

    # graphs
    def cuGraphCreate(self, flags):
        g = self._id()
        self.graphs[g] = {"nodes": [], "exec": None, "destroyed": False}
        return self.ok, self._d.CUgraph(g)

    def _node(self, g, deps, n, **rec):
        assert n == len(deps)
        graph = self.graphs[int(g)]
        assert graph["exec"] is None and not graph["destroyed"]
        node = self._id()
        rec["deps"] = [int(d) for d in deps]
        self.nodes[node] = rec
        graph["nodes"].append(node)
        return self.ok, self._d.CUgraphNode(node)

    def cuGraphAddMemAllocNode(self, g, deps, n, a):
        assert a.bytesize > 0
        assert a.poolProps.allocType == self.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
        assert a.poolProps.location.type == self.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        a.dptr = self._id()
        return self._node(g, deps, n, kind="alloc", dptr=int(a.dptr))

    def cuGraphAddKernelNode(self, g, deps, n, p):
        if self._failing("cuGraphAddKernelNode"):
            return self._d.CUresult.CUDA_ERROR_INVALID_VALUE, None
        return self._node(g, deps, n, kind="kernel", func=int(p.func), args=self._args(p.func, p.kernelParams),
                          grid=(p.gridDimX, p.gridDimY, p.gridDimZ))

    def cuGraphAddMemsetNode(self, g, deps, n, m, ctx):
        assert m.elementSize == 1 and m.height == 1
        return self._node(g, deps, n, kind="memset", dptr=int(m.dst), value=m.value, width=m.width)

    def cuGraphAddMemFreeNode(self, g, deps, n, dptr):
        allocs = [self.nodes[x]["dptr"] for x in self.graphs[int(g)]["nodes"] if self.nodes[x]["kind"] == "alloc"]
        assert int(dptr) in allocs
        return self._node(g, deps, n, kind="free", dptr=int(dptr))

    def cuGraphInstantiate(self, g, flags):
        graph = self.graphs[int(g)]
        if self._failing("cuGraphInstantiate"):
            return self._d.CUresult.CUDA_ERROR_NOT_SUPPORTED, None
        assert graph["exec"] is None, "a graph with memory nodes may be instantiated once"
        order = graph["nodes"]
        for a, b in zip(order, order[1:]):  # one chain, in the order the nodes were added
            assert self.nodes[b]["deps"] == [a]
        assert self.nodes[order[0]]["deps"] == []
        e = self._id()
        self.execs[e] = {"graph": int(g), "destroyed": False,
                         "args": {x: self.nodes[x]["args"] for x in order if self.nodes[x]["kind"] == "kernel"}}
        graph["exec"] = e
        return self.ok, self._d.CUgraphExec(e)

    def cuGraphExecKernelNodeSetParams(self, e, node, p):
        if self._failing("cuGraphExecKernelNodeSetParams"):
            return (self._d.CUresult.CUDA_ERROR_INVALID_VALUE,)
        ex = self.execs[int(e)]
        assert int(node) in ex["args"] and not ex["destroyed"]
        ex["args"][int(node)] = self._args(p.func, p.kernelParams)
        return (self.ok,)

    def cuGraphLaunch(self, e, stream):
        if self._failing("cuGraphLaunch"):
            return (self._d.CUresult.CUDA_ERROR_LAUNCH_FAILED,)
        ex = self.execs[int(e)]
        assert not ex["destroyed"]
        self.log.append(("g", int(stream), [(self.nodes[x]["func"], a) for x, a in ex["args"].items()]))
        return (self.ok,)

    def cuGraphExecDestroy(self, e):
        self.execs[int(e)]["destroyed"] = True
        return (self.ok,)

    def cuGraphDestroy(self, g):
        graph = self.graphs[int(g)]
        assert graph["exec"] is None or self.execs[graph["exec"]]["destroyed"]
        graph["destroyed"] = True
        return (self.ok,)


class FakeRuntime:
    """CudaRuntime's memory helpers over a FakeDriver; functions are never compiled."""

    from einc.runtime.cuda import CudaRuntime as _R
    alloc, free, alloc_persistent, upload, synchronize, stream, zero = (
        _R.alloc, _R.free, _R.alloc_persistent, _R.upload, _R.synchronize, _R.stream, _R.zero)

    def __init__(self, cu):
        self.cu, self.arch, self.ordinal, self.device, self.context = cu, "sm_90", 0, 0, None
        self._streams = {}

    def make_current(self):
        pass

    def function(self, kernel, options):
        fn = self.cu.functions.get(kernel.key)
        if fn is None:
            fn = self.cu.functions[kernel.key] = self.cu._d.CUfunction(self.cu._id())
        return fn


@pytest.fixture
def fake(monkeypatch):
    driver = pytest.importorskip("cuda.bindings.driver")
    import einc.runtime.cuda as rc
    cu = FakeDriver(driver)
    monkeypatch.setattr(rc, "_driver", lambda: cu)    # check() names failures through it
    monkeypatch.setattr(rc, "_LAUNCH", False)         # no ctypes fast paths: everything via cu
    monkeypatch.setattr(rc, "_GRAPH_LAUNCH", False)
    monkeypatch.setattr(rc, "_IS_CAPTURING", False)
    monkeypatch.setattr(rc, "_SYNC_EACH_STEP", False)
    monkeypatch.setattr(xc, "_GRAPHS", [True])
    return cu


def _executable(cu, subs, shapes, dtype="float32"):
    ex = xc.CudaExecutable(plan_for(subs, shapes, dtype, backend="cuda"), FakeRuntime(cu))
    cu.nptrs.update({int(l.fn): len(l.ptrs) for l, _ in ex.launchers})
    cu.ntmaps.update({int(l.fn): len(l.tmaps) for l, _ in ex.launchers})
    return ex


def _p(*ks):
    """Fake device pointers, 256-byte aligned like real allocations (16-byte kernels need it)."""
    return [0x100 * k for k in ks]


def _normalised(entry, ext):
    """A call's launches with intermediates renamed t0, t1... in order of first use."""
    names = {p: f"x{i}" for i, p in enumerate(ext)}
    out = []
    for fn, args in entry:
        for p in args:
            names.setdefault(p, f"t{len(names) - len(ext)}")
        out.append((fn, tuple(names[p] for p in args)))
    return out


def _calls(ex, cu, plan, stream_handles):
    """Run ``ex`` once per stream handle with fresh pointers; the launches of each call."""
    results = []
    for n, h in enumerate(stream_handles):
        ext = [0x7000000 + 0x100 * (7 * n + k) for k in range(len(plan.bound.inputs) + 1)]
        if n % 3 == 2:  # sometimes the same pointers as the call before: no update
            ext = results[-1][0]
        start = len(cu.log)
        ex(ext[:-1], ext[-1], ex.rt.stream(h))
        launched = [x for kind, s, entry in cu.log[start:] for x in entry]
        assert all(s == h for _, s, _ in cu.log[start:])
        results.append((ext, _normalised(launched, ext), [k for k, _, _ in cu.log[start:]]))
    return results


@pytest.mark.parametrize("subs,shapes", MULTI)
def test_fake_graph_runs_what_direct_launches_run(fake, subs, shapes):
    cu = fake
    streams = [0, 0, 0, 0, 0, 0x55, 0x55, 0, 0x55]
    graph_ex = _executable(cu, subs, shapes)
    with_graphs = _calls(graph_ex, cu, graph_ex.plan, streams)
    xc.set_cuda_graphs(False)
    direct_ex = _executable(cu, subs, shapes)
    direct = _calls(direct_ex, cu, direct_ex.plan, streams)
    n = len(graph_ex.launchers)
    assert [k for _, _, k in direct] == [["k"] * n] * len(streams)
    assert [k for _, _, k in with_graphs] == [["k"] * n] + [["g"]] * (len(streams) - 1)
    for (_, g, _), (_, d, _) in zip(with_graphs, direct):
        assert g == d  # same kernels, same caller pointers, intermediates used alike
    assert graph_ex.graph_launches == len(streams) - 1 and direct_ex.graph_launches == 0
    assert graph_ex.graph_builds == 2 and len(graph_ex._graphs) == 2  # one per stream
    assert graph_ex.graph_error is None
    slots = xc.ext_slots(graph_ex._sources)
    expected, last = 0, {}
    for (ext, _, _), h in list(zip(with_graphs, streams))[1:]:  # the first call was direct
        if h in last:  # a stream's graph is built around its first call's pointers
            expected += len(xc.changed_nodes(slots, last[h], tuple(ext)))
        last[h] = tuple(ext)
    assert graph_ex.graph_updates == expected
    graph_ex.release_graphs()
    assert all(e["destroyed"] for e in cu.execs.values())
    assert all(g["destroyed"] for g in cu.graphs.values())


def test_fake_updates_only_the_nodes_whose_pointers_moved(fake):
    cu = fake
    ex = _executable(cu, *CHAIN3)
    s = ex.rt.stream(0)
    ex(_p(1, 2, 3), _p(4)[0], s)   # direct
    ex(_p(1, 2, 3), _p(4)[0], s)   # builds the graph around these pointers: no update
    assert (ex.graph_builds, ex.graph_updates) == (1, 0)
    ex(_p(1, 2, 3), _p(4)[0], s)
    assert ex.graph_updates == 0
    ex(_p(1, 2, 3), _p(5)[0], s)   # a new output buffer: only its writer changes
    assert ex.graph_updates == 1
    assert cu.log[-1][2][-1][1][0] == _p(5)[0]
    ex(_p(9, 2, 3), _p(5)[0], s)
    readers = len(xc.changed_nodes(xc.ext_slots(ex._sources), (1, 2, 3, 5), (9, 2, 3, 5)))
    assert ex.graph_updates == 1 + readers
    assert ex.graph_launches == 4 and ex.calls == 5


def test_fake_single_step_and_switches_keep_direct_launches(fake, monkeypatch):
    cu = fake
    one = _executable(cu, "ij,jk->ik", [(64, 64), (64, 64)])
    for _ in range(3):
        one(_p(1, 2), _p(3)[0], one.rt.stream(0))
    assert one.graph_launches == 0 and not one._graphable
    ex = _executable(cu, *CHAIN3)
    monkeypatch.setattr(xc, "_GRAPHS", [False])
    for _ in range(3):
        ex(_p(1, 2, 3), _p(4)[0], ex.rt.stream(0))
    import einc.runtime.cuda as rc
    monkeypatch.setattr(xc, "_GRAPHS", [True])
    monkeypatch.setattr(rc, "_SYNC_EACH_STEP", True)
    for _ in range(3):
        ex(_p(1, 2, 3), _p(4)[0], ex.rt.stream(0))
    assert ex.graph_launches == ex.graph_builds == 0
    monkeypatch.setattr(rc, "_SYNC_EACH_STEP", False)
    ex(_p(1, 2, 3), _p(4)[0], ex.rt.stream(0))
    assert ex.graph_launches == 1


def test_fake_captured_stream_gets_direct_launches(fake):
    """Inside a caller's capture (torch.cuda.graph) the launches themselves are recorded."""
    cu = fake
    ex = _executable(cu, *CHAIN3)
    cu.capturing.add(0x77)
    for _ in range(3):
        ex(_p(1, 2, 3), _p(4)[0], ex.rt.stream(0x77))
    assert ex.graph_builds == ex.graph_launches == 0
    assert [k for k, _, _ in cu.log] == ["k"] * (3 * len(ex.launchers))
    cu.capturing.clear()
    ex(_p(1, 2, 3), _p(4)[0], ex.rt.stream(0x77))
    assert ex.graph_launches == 1


def test_fake_build_failure_falls_back_to_direct_launches(fake):
    cu = fake
    ex = _executable(cu, *CHAIN4)
    cu.fail["cuGraphInstantiate"] = 1
    ex(_p(1, 2, 3, 4), _p(5)[0], ex.rt.stream(0))
    with pytest.warns(RuntimeWarning, match="cuGraphInstantiate"):
        ex(_p(1, 2, 3, 4), _p(5)[0], ex.rt.stream(0))
    assert "cuGraphInstantiate failed" in ex.graph_error
    assert all(g["destroyed"] for g in cu.graphs.values())  # the half-built graph is gone
    n = len(cu.log)
    ex(_p(1, 2, 3, 4), _p(5)[0], ex.rt.stream(0))
    assert [k for k, _, _ in cu.log[n:]] == ["k"] * len(ex.launchers)
    assert ex.graph_launches == 0


def test_fake_replay_errors_are_einc_errors_and_recover(fake):
    cu = fake
    ex = _executable(cu, *CHAIN3)
    s = ex.rt.stream(0)
    ex(_p(1, 2, 3), _p(4)[0], s)
    ex(_p(1, 2, 3), _p(4)[0], s)
    cu.fail["cuGraphLaunch"] = 1
    with pytest.raises(EincCudaError, match="launching the CUDA graph of step 0"):
        ex(_p(1, 2, 3), _p(4)[0], s)
    cu.fail["cuGraphExecKernelNodeSetParams"] = 1
    with pytest.raises(EincCudaError, match="updating the CUDA graph node of step"):
        ex(_p(1, 2, 3), _p(6)[0], s)
    ex(_p(1, 2, 3), _p(4)[0], s)  # every node is refreshed after a failed update
    direct = _executable(cu, *CHAIN3)
    xc.set_cuda_graphs(False)
    direct(_p(1, 2, 3), _p(4)[0], s)
    k = len(direct.launchers)
    assert _normalised(cu.log[-k - 1][2], _p(1, 2, 3, 4)) == _normalised(
        [x for _, _, e in cu.log[-k:] for x in e], _p(1, 2, 3, 4))


def test_fake_streams_beyond_the_cap_evict_the_oldest_graph(fake):
    cu = fake
    ex = _executable(cu, *CHAIN3)
    for h in range(xc.GRAPH_MAX_STREAMS + 2):
        ex(_p(1, 2, 3), _p(4)[0], ex.rt.stream(0x100 + h))
    assert len(ex._graphs) == xc.GRAPH_MAX_STREAMS
    assert sum(e["destroyed"] for e in cu.execs.values()) == 1  # the first call was direct


# --- on the GPU ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _cached(subs, shapes, dtype="float32"):
    """The CudaExecutable einc.einsum cached for contiguous device operands of ``shapes``."""
    want = tuple((tuple(s), np.dtype(dtype)) for s in shapes)
    hits = [v for k, v in einc.api._EXECUTABLES.data.items()
            if k[0] == "cuda-fast" and k[1] == subs and tuple((s, np.dtype(d)) for s, _, d in k[2]) == want]
    assert hits, f"no cached executable for {subs} {shapes}"
    return hits[-1]


@pytest.fixture
def fresh_executables():
    """Count graph builds on executables of this test alone: other GPU tests in the same
    process (the concurrency tests' streams) build graphs on the same cached executables."""
    einc.api._EXECUTABLES.clear()
    yield


@pytest.mark.gpu
@pytest.mark.parametrize("subs,shapes", MULTI)
def test_gpu_graph_replays_match_numpy(torch, fresh_executables, subs, shapes):
    assert len(plan_for(subs, shapes, "float32", backend="cuda").steps) >= 2
    rng = np.random.default_rng(len(subs))
    kept = []  # keep results alive so every call writes a new output buffer
    for call in range(6):
        ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        r = einc.einsum(subs, *[torch.from_numpy(o).cuda() for o in ops])
        kept.append(r)
        assert_matches(r.cpu().numpy(), subs, *ops, terms=TERMS[subs])
        if call == 0:
            ex = _cached(subs, shapes)
            builds, launches, updates = ex.graph_builds, ex.graph_launches, ex.graph_updates
    assert ex.graph_error is None
    assert ex.graph_builds <= builds + 1 and ex.graph_launches == launches + 5
    assert ex.graph_updates >= updates + 4  # new inputs and outputs every call


@pytest.mark.gpu
def test_gpu_executable_with_moving_pointers_and_streams(torch):
    from einc.runtime.cuda import runtime
    subs, shapes = CHAIN4
    rt = runtime()
    rt.make_current()
    ex = xc.CudaExecutable(plan_for(subs, shapes, "float32", backend="cuda"), rt)
    rng = np.random.default_rng(1)
    sets = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    dev = [[torch.from_numpy(o).cuda() for o in ops] for ops in sets]
    outs = [torch.full((40, 20), float("nan"), device="cuda") for _ in range(4)]
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    for call in range(12):
        k, o = call % 3, (call * 5) % 4
        s = side if call % 4 == 3 else torch.cuda.current_stream()
        ex([t.data_ptr() for t in dev[k]], outs[o].data_ptr(), rt.stream(s.cuda_stream))
        s.synchronize()
        assert_matches(outs[o].cpu().numpy(), subs, *sets[k], terms=TERMS[subs])
        outs[o].fill_(float("nan"))
        torch.cuda.synchronize()
    assert ex.graph_error is None
    assert ex.graph_builds == 2 and ex.graph_launches == 11 and ex.graph_updates > 0


@pytest.mark.gpu
def test_gpu_two_streams_in_flight_do_not_share_intermediates(torch, fresh_executables):
    subs, shapes = CHAIN3
    rng = np.random.default_rng(2)
    a = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(2)]
    ta = [[torch.from_numpy(o).cuda() for o in ops] for ops in a]
    einc.einsum(subs, *ta[0])
    einc.einsum(subs, *ta[0])  # a graph on the default stream
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    res = []
    for _ in range(20):  # no synchronisation between the two streams' replays
        with torch.cuda.stream(s1):
            res.append((0, einc.einsum(subs, *ta[0])))
        with torch.cuda.stream(s2):
            res.append((1, einc.einsum(subs, *ta[1])))
    torch.cuda.synchronize()
    for k, r in res:
        assert_matches(r.cpu().numpy(), subs, *a[k], terms=TERMS[subs])
    assert _cached(subs, shapes).graph_builds == 3  # default stream, s1, s2


@pytest.mark.gpu
def test_gpu_numpy_operands_through_graphs(torch):
    subs, shapes = ("ij,jk,kl->il", [(33, 17), (17, 29), (29, 5)])
    rng = np.random.default_rng(3)
    for _ in range(4):  # uploads land at new addresses each call
        ops = [rng.standard_normal(s) for s in shapes]
        assert_matches(einc.einsum(subs, *ops, backend="cuda"), subs, *ops, terms=64)
    ex = [v for k, v in einc.api._EXECUTABLES.data.items()
          if k[0] == "cuda" and isinstance(v, xc.CudaExecutable) and v.plan.out_shape == (33, 5)
          and v.plan.out_dtype == np.float64][-1]
    assert ex.graph_launches >= 3 and ex.graph_error is None


@pytest.mark.gpu
def test_gpu_graphs_off_in_process_give_the_same_answer(torch):
    subs, shapes = ("ij,jk,kl->il", [(48, 24), (24, 40), (40, 8)])
    rng = np.random.default_rng(4)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    t = [torch.from_numpy(o).cuda() for o in ops]
    with_graphs = [einc.einsum(subs, *t) for _ in range(3)][-1]
    ex = _cached(subs, shapes)
    launched = ex.graph_launches
    assert launched == 2
    before = xc.set_cuda_graphs(False)
    try:
        without = [einc.einsum(subs, *t) for _ in range(3)][-1]
    finally:
        xc.set_cuda_graphs(before)
    assert ex.graph_launches == launched
    np.testing.assert_array_equal(without.cpu().numpy(), with_graphs.cpu().numpy())
    ex.release_graphs()
    again = einc.einsum(subs, *t)
    assert ex.graph_builds == 2
    np.testing.assert_array_equal(again.cpu().numpy(), with_graphs.cpu().numpy())
    torch.cuda.synchronize()
    assert xc.graph_memory()["reserved"] >= 0
    xc.trim_graph_memory()
    assert set(xc.graph_memory()) == {"used", "reserved"}


@pytest.mark.gpu
def test_gpu_inside_a_torch_cuda_graph_capture(torch):
    """A caller capturing einc (torch.cuda.graph) records einc's launches, not einc's graph."""
    subs, shapes = ("ij,jk,kl->il", [(24, 40), (40, 16), (16, 8)])
    static = [torch.zeros(*s_, device="cuda") for s_ in shapes]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            einc.einsum(subs, *static)  # warm-up: einc builds its own graph on this stream
    torch.cuda.current_stream().wait_stream(side)
    ex = _cached(subs, shapes)
    launches = ex.graph_launches
    assert launches >= 1
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = einc.einsum(subs, *static)
    assert ex.graph_launches == launches
    rng = np.random.default_rng(5)
    for _ in range(3):
        ops = [rng.standard_normal(s_).astype(np.float32) for s_ in shapes]
        for t, o in zip(static, ops):
            t.copy_(torch.from_numpy(o))
        g.replay()
        torch.cuda.synchronize()
        assert_matches(out.cpu().numpy(), subs, *ops, terms=64)


@pytest.mark.gpu
def test_gpu_single_step_plans_launch_directly(torch):
    a = torch.randn(64, 64, device="cuda")
    for _ in range(3):
        einc.einsum("ij,jk->ik", a, a)
    ex = _cached("ij,jk->ik", [(64, 64), (64, 64)])
    assert len(ex.launchers) == 1 and ex.graph_launches == 0


_SUBPROCESS = textwrap.dedent("""
    import numpy as np, torch, einc
    from einc.api import _EXECUTABLES
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(s).astype(np.float32) for s in [(30, 40), (40, 50), (50, 20)]]
    t = [torch.from_numpy(o).cuda() for o in ops]
    for _ in range(4):
        r = einc.einsum("ij,jk,kl->il", *t)
    ref = np.einsum("ij,jk,kl->il", *[o.astype(np.float64) for o in ops])
    assert np.allclose(r.cpu().numpy(), ref, rtol=1e-4, atol=1e-3)
    ex = [v for k, v in _EXECUTABLES.data.items() if k[0] == "cuda-fast"][0]
    print(ex.graph_launches, ex.calls)
""")


@pytest.mark.gpu
@pytest.mark.parametrize("env,launches", [({"EINC_CUDA_GRAPHS": "0"}, 0), ({"EINC_CUDA_SYNC": "1"}, 0),
                                          ({"EINC_CUDA_GRAPHS": "1"}, 3)])
def test_gpu_environment_switches(torch, env, launches):
    full = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", _SUBPROCESS], env=full, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(launches), "4"]


def _pool_reserved() -> int:
    from einc.runtime.cuda import runtime
    rt = runtime(0)
    attr = rt.cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
    err, value = rt.cu.cuMemPoolGetAttribute(rt.pool, attr)
    return int(value)


@pytest.mark.gpu
def test_gpu_the_stream_pool_keeps_big_intermediates_between_calls(torch):
    """Intermediates over GRAPH_MAX_TEMP_BYTES take the direct path's stream-ordered pool.
    The driver's default release threshold (0) unmaps them at every synchronisation and maps
    them again on the next call (~3.5 ms per GiB on the H200); einc raises it, so after a
    synchronised call the pool still holds the intermediate, and trim_memory() returns it."""
    n = 8192  # ij,jk->ik first: n x (n + 1) float32, just past GRAPH_MAX_TEMP_BYTES
    subs, shapes = "ij,jk,kl->il", [(n, 2), (2, n + 1), (n + 1, 3)]
    rng = np.random.default_rng(3)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    t = [torch.from_numpy(o).cuda() for o in ops]
    got = einc.einsum(subs, *t, optimize=[(0, 1), (0, 1)])
    torch.cuda.synchronize()
    assert _pool_reserved() >= n * (n + 1) * 4 > xc.GRAPH_MAX_TEMP_BYTES
    assert_matches(got.cpu().numpy(), subs, *ops, terms=2 * (n + 1))
    xc.trim_memory()
    assert _pool_reserved() < n * (n + 1) * 4


def test_a_kernels_scratch_is_allocated_zeroed_and_passed_after_its_operands(fake, monkeypatch):
    """skinny's split tiles count their K ranges in a scratch that must start at zero: the
    direct path zeroes it on the stream before the launch, the graph with a memset node."""
    from einc.codegen.cuda import emit_skinny
    monkeypatch.setattr(emit_skinny, "MIN_ROWS", 1)
    monkeypatch.setattr("einc.codegen.cuda.emit.SM_COUNT", 1)  # 9 tiles on 2 slots: the last one in K ranges
    monkeypatch.setenv("EINC_SKINNY_KSPLIT", "1")
    cu = fake
    ex = _executable(cu, "akb,jk,b->jba", [(40, 64, 70), (24, 64), (70,)])
    k = ex.kernels[0]
    assert k.scratch > k.scratch_zero == 256 and ex.kernels[1].scratch == 0
    s = cu.CUstream(7)
    ex(_p(1, 2, 3), _p(4)[0], s)  # direct
    zeroes = [e for e in cu.log if e[0] == "z"]
    launch = [e for e in cu.log if e[0] == "k"][0]
    assert len(zeroes) == 1 and zeroes[0][1:] == (7, launch[2][0][1][3], 0, 256)
    assert len(launch[2][0][1]) == 4 and launch[2][0][1][1:3] == tuple(_p(1, 2))  # out, A, B, scratch
    ex(_p(1, 2, 3), _p(4)[0], s)  # the graph
    g = cu.graphs[max(cu.graphs)]
    kinds = [cu.nodes[n]["kind"] for n in g["nodes"]]
    memset = [cu.nodes[n] for n in g["nodes"] if cu.nodes[n]["kind"] == "memset"]
    kern = [cu.nodes[n] for n in g["nodes"] if cu.nodes[n]["kind"] == "kernel"][0]
    assert len(memset) == 1 and memset[0]["width"] == 256 and memset[0]["value"] == 0
    assert kern["args"][3] == memset[0]["dptr"] and kinds.index("memset") < kinds.index("kernel")
    assert ("alloc", memset[0]["dptr"]) in [(cu.nodes[n]["kind"], cu.nodes[n].get("dptr")) for n in g["nodes"]]


def test_tensor_maps_follow_the_pointers_direct_and_in_graphs(fake):
    """The wgmma TMA kernels take their operands' tensor maps by value: each launch (and
    each graph node) must carry maps of *its* pointers, re-encoded only when one moves."""
    cu = fake
    ex = _executable(cu, "ij,jk,kl->il", [(4096, 4096)] * 3, "float16")  # a TMA wgmma, then a reduce
    tm = [(n, l.tmaps) for n, (l, _) in enumerate(ex.launchers) if l.tmaps]
    assert tm, [k.name for k in ex.kernels]
    s = cu.CUstream(5)

    def check(entry, ext):
        """Each TMA launch's maps point at the pointers in its own argument slots."""
        for n, maps in tm:
            fn, args = entry[n]
            nptrs = cu.nptrs[fn]
            assert args[nptrs:] == tuple(args[m.ptr] for m in maps)

    for call, ext in enumerate([_p(1, 2, 3, 4), _p(1, 2, 3, 4), _p(8, 2, 3, 4), _p(8, 2, 9, 6)]):
        before, encoded = len(cu.log), len(cu.encoded)
        ex(ext[:-1], ext[-1], s)
        kinds = {k for k, _, _ in cu.log[before:]}
        assert kinds == ({"k"} if call == 0 else {"g"})
        check([x for _, _, entry in cu.log[before:] for x in entry], ext)
        if call == 1:  # the graph's nodes hold their own maps, from the launcher's encodings
            assert cu.encoded[encoded:] == []
        if call == 2:  # operand 0 moved: only its map is re-encoded
            assert [a for a, _, _ in cu.encoded[encoded:]] == [ext[0]]
        if call == 3:  # only what the reduce step reads and writes moved: no map changes
            assert cu.encoded[encoded:] == []
    # pointers seen before (a caching allocator's blocks): the maps come from the launcher's
    # cache, on direct launches too
    before, encoded = len(cu.log), len(cu.encoded)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(xc, "_GRAPHS", [False])
        for ext in (_p(1, 2, 3, 4), _p(8, 2, 3, 4), _p(1, 2, 3, 4)):
            ex(ext[:-1], ext[-1], s)
            check([x for _, _, entry in cu.log[-len(ex.launchers):] for x in entry], ext)
    assert [a for a, _, _ in cu.encoded[encoded:]] == []
