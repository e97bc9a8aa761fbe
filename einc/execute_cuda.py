"""Run a Plan on a CUDA device: one emitted kernel per step, launched on the caller's stream.

A CudaExecutable compiles (or fetches) every step's kernel once, uploads the offset
tables GEMM steps use, and prepares each launch's argument block. A call then runs in one
of two ways:

- **direct** (a single-step plan, the first call of any plan, ``EINC_CUDA_SYNC=1``,
  ``EINC_CUDA_GRAPHS=0``, operands a 16-byte kernel cannot take, which run its
  element-path twin, a stream being captured, e.g. by ``torch.cuda.graph`` or
  ``torch.compile(mode="reduce-overhead")``, whose graph then records these launches and
  allocations as it would any library's): allocate the intermediates from the
  stream-ordered pool (``cuMemAllocAsync``), launch every step, free them on the same
  stream;
- **graph** (later calls of a plan with two or more launches): replay one CUDA graph that
  holds the whole contraction, so a call costs one ``cuGraphLaunch`` (plus one parameter
  update per kernel whose caller pointers moved) instead of N launches, an allocation and
  a free per intermediate.

The graph is built explicitly, not captured: capture cannot run on the legacy default
stream (where PyTorch's default stream lives) and, in the global capture mode, would
break other threads' unsafe calls. It is a chain

    alloc(temp 0) -> ... -> kernel(step 0) -> ... -> kernel(step n-1) -> free(temp 0) -> ...

where the alloc/free pairs are *graph memory nodes*: the driver gives each intermediate
a fixed virtual address when the node is added (so the kernel nodes carry it as a
constant) and backs it from its graph memory pool at launch, reusing the same physical
pages across graphs replayed on one stream. Intermediates larger than
GRAPH_MAX_TEMP_BYTES keep the direct path: that pool keeps what it holds until
``trim_graph_memory()``, and steps that large take far longer than their launches anyway.

One graph is instantiated per (executable, stream): a graph with memory nodes may have
only one instantiation, and replays of one instantiation are serialised by the driver
(ordered behind each other), which would tie independent streams together. At most
GRAPH_MAX_STREAMS graphs are kept per executable (the oldest is destroyed; the driver
frees an instantiation still running when it completes).

Each kernel node gets its own argument block (pointer holders + a copy of the metadata
struct), kept alive with the graph; the driver copies the values when a node is added or
updated, so the direct path's shared, lock-guarded Launcher blocks are never involved. A
replay compares the caller's pointers (operands, output) with the previous replay's and,
for every kernel node that reads or writes one that moved, rewrites its holders and calls
``cuGraphExecKernelNodeSetParams`` (which affects only later replays), all under the
graph's lock so two threads replaying on one stream cannot interleave update and launch.
Any driver failure while building a graph makes this executable fall back to direct
launches (with a RuntimeWarning and ``graph_error`` set); a failed replay raises
EincCudaError naming the steps.
"""
from __future__ import annotations

import ctypes
import os
import threading
import warnings

import numpy as np

from .ir import Plan
from .runtime import cuda as _rtcuda
from .runtime.cuda import CudaRuntime, Launcher, check

GRAPH_MIN_LAUNCHES = 2        # one launch gains nothing from a graph
GRAPH_AFTER_CALLS = 1         # build on the second call: a one-off call pays no graph build
GRAPH_MAX_TEMP_BYTES = 256 << 20
GRAPH_MAX_STREAMS = 8


def graphs_enabled_from_env(environ=os.environ) -> bool:
    """``EINC_CUDA_GRAPHS=0`` turns CUDA graphs off; anything else (or unset) leaves them on.

    >>> graphs_enabled_from_env({"EINC_CUDA_GRAPHS": "0"}), graphs_enabled_from_env({})
    (False, True)
    """
    return environ.get("EINC_CUDA_GRAPHS", "1").strip() != "0"


_GRAPHS = [graphs_enabled_from_env()]


def set_cuda_graphs(enabled: bool) -> bool:
    """Turn CUDA graph replay on or off for this process; returns the previous setting.

    >>> previous = set_cuda_graphs(False); _ = set_cuda_graphs(previous)
    """
    previous = _GRAPHS[0]
    _GRAPHS[0] = bool(enabled)
    return previous


def cuda_graphs_enabled() -> bool:
    """Whether multi-launch plans replay CUDA graphs (EINC_CUDA_GRAPHS, set_cuda_graphs)."""
    return _GRAPHS[0]


def graph_wanted(n_launches: int, temp_bytes: int, prior_calls: int, enabled: bool,
                 sync_each_step: bool) -> bool:
    """Whether a call of an executable should run as a CUDA graph.

    >>> graph_wanted(2, 1024, prior_calls=1, enabled=True, sync_each_step=False)
    True
    >>> graph_wanted(1, 0, prior_calls=5, enabled=True, sync_each_step=False)  # one launch
    False
    """
    return (enabled and not sync_each_step and n_launches >= GRAPH_MIN_LAUNCHES
            and prior_calls >= GRAPH_AFTER_CALLS and temp_bytes <= GRAPH_MAX_TEMP_BYTES)


def alias_roots(plan: Plan) -> dict:
    """``{alias buffer: (root buffer, byte offset)}``: an alias (``Buffer("alias", dtype, 0,
    base, (element offset,))``, plan.complex_as_real's real views) is its base's address
    plus the offset in its own elements; the root is an input, output or temp.

    >>> from einc.api import plan_for
    >>> p = plan_for("ij,jk->ik", [(300, 200), (200, 100)], "complex64", backend="cuda")
    >>> sorted(set(alias_roots(p).values()))  # operands, output, M; B's imaginary parts, M's -B_im half
    [(0, 0), (1, 0), (1, 4), (2, 0), (3, 0), (3, 800)]
    """
    out = {}
    for i, b in enumerate(plan.buffers):
        offset, w = 0, i
        while plan.buffers[w].role == "alias":
            b = plan.buffers[w]
            offset += (b.data[0] if b.data else 0) * np.dtype(b.dtype).itemsize
            w = b.index
        if w != i:
            out[i] = (w, offset)
    return out


def arg_sources(plan: Plan):
    """Per step, where each kernel pointer argument (result, operands...) comes from.

    ``("ext", k)`` is the caller's operand ``k``, ``("ext", -1)`` the caller's output,
    ``("temp", j)`` the j-th intermediate, ``("const", j)`` the j-th const buffer (uploaded
    with the executable); an alias is its root's source (its byte offset: arg_offsets).
    None when a step touches a buffer of any other role (such a plan keeps the direct path).

    >>> from einc.api import plan_for
    >>> arg_sources(plan_for("ij,jk,kl->il", [(8, 9), (9, 10), (10, 11)], backend="cuda"))
    [(('temp', 0), ('ext', 0), ('ext', 1)), (('ext', -1), ('ext', 2), ('temp', 0))]
    """
    roles = [b.role for b in plan.buffers]
    temps = {i: j for j, i in enumerate(i for i, r in enumerate(roles) if r == "temp")}
    consts = {i: j for j, i in enumerate(i for i, r in enumerate(roles) if r == "const")}
    roots = alias_roots(plan)
    out = []
    for step in plan.steps:
        srcs = []
        for w in (step.result, *step.operands):
            w = roots.get(w, (w, 0))[0]
            b = plan.buffers[w]
            if b.role == "input":
                srcs.append(("ext", b.index))
            elif b.role == "output" or w == plan.output:
                srcs.append(("ext", -1))
            elif b.role == "temp":
                srcs.append(("temp", temps[w]))
            elif b.role == "const":
                srcs.append(("const", consts[w]))
            else:
                return None
        out.append(tuple(srcs))
    return out


def arg_offsets(plan: Plan) -> list:
    """Per step, the byte offset of each kernel pointer argument from its source's address
    (non-zero only for aliases into a buffer: plan.complex_as_real's second halves)."""
    roots = alias_roots(plan)
    return [tuple(roots.get(w, (w, 0))[1] for w in (s.result, *s.operands)) for s in plan.steps]


def ext_slots(sources) -> list:
    """Per step, ``(argument position, caller pointer index)`` of its caller-owned arguments."""
    return [tuple((h, e) for h, (kind, e) in enumerate(srcs) if kind == "ext") for srcs in sources]


def changed_nodes(slots, old: tuple, new: tuple) -> list:
    """Indices of the steps whose caller pointers differ between ``old`` and ``new``.

    >>> changed_nodes([((1, 0), (2, 1)), ((0, -1),)], (10, 11, 12), (10, 11, 99))
    [1]
    """
    return [n for n, s in enumerate(slots) if any(old[e] != new[e] for _, e in s)]


def kernel_node_params(cu, launch: Launcher, params_addr: int):
    """A CUDA_KERNEL_NODE_PARAMS for ``launch``'s kernel with kernelParams at ``params_addr``."""
    p = cu.CUDA_KERNEL_NODE_PARAMS()
    p.func = launch.fn
    p.gridDimX, p.gridDimY, p.gridDimZ = (int(x) for x in launch.grid)
    p.blockDimX, p.blockDimY, p.blockDimZ = (int(x) for x in launch.block)
    p.sharedMemBytes = int(launch.smem)
    p.kernelParams = params_addr  # extra stays NULL; kern/ctx NULL: func in the current context
    return p


class _NodeArgs:
    """One kernel node's own argument block: pointer holders, the metadata struct, and the
    launch's tensor maps (encoded for these pointers; ``repoint`` re-encodes)."""

    def __init__(self, launch: Launcher, pointers):
        self.launch = launch
        self.ptrs = [ctypes.c_void_p(p) for p in pointers]
        self.meta = ctypes.create_string_buffer(launch.meta.raw, len(launch.meta))
        addrs = [ctypes.addressof(p) for p in self.ptrs] + [ctypes.addressof(self.meta)]
        if launch.tmaps:
            self.tm = ctypes.create_string_buffer(len(launch.tm))
            self.tm_last = [None] * len(launch.tmaps)
            launch.fill_tmaps(self.tm, pointers, self.tm_last)
            addrs.append(ctypes.addressof(self.tm))
        self.params = (ctypes.c_void_p * len(addrs))(*addrs)
        self.addr = ctypes.addressof(self.params)

    def repoint(self) -> None:
        """After the pointer holders changed: the tensor maps follow them."""
        if self.launch.tmaps:
            self.launch.fill_tmaps(self.tm, [p.value or 0 for p in self.ptrs], self.tm_last)


class _Graph:
    """One executable's steps as an instantiated CUDA graph, replayed on one stream."""

    def __init__(self, ex: "CudaExecutable", ext: tuple):
        rt, cu = ex.rt, ex.rt.cu
        self.cu = cu  # (no reference back to ex: evicting an executable frees it at once)
        self.graph = self.exec = None
        self.lock = threading.Lock()
        self.closed = False
        self.nodes = []  # (CUgraphNode, CUDA_KERNEL_NODE_PARAMS, _NodeArgs, Launcher)
        self.slots = ext_slots(ex._sources)
        self.offsets = ex._offsets
        self.last = ext
        self._stale = (-1,) * len(ext)  # matches no pointer: forces every update
        try:
            self.graph = check(cu.cuGraphCreate(0), "cuGraphCreate")
            prev, temps = [], []
            for i, nbytes in ex.temps:
                if nbytes == 0:
                    temps.append(0)
                    continue
                a = cu.CUDA_MEM_ALLOC_NODE_PARAMS()
                a.poolProps.allocType = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
                a.poolProps.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
                a.poolProps.location.id = int(rt.device)
                a.bytesize = nbytes
                node = check(cu.cuGraphAddMemAllocNode(self.graph, prev, len(prev), a),
                             f"cuGraphAddMemAllocNode ({nbytes} bytes for an intermediate)")
                temps.append(int(a.dptr))
                prev = [node]
                if ex._zero.get(i):  # a kernel's scratch: zeroed before the kernel that uses it
                    m = cu.CUDA_MEMSET_NODE_PARAMS()
                    m.dst, m.value, m.elementSize, m.width, m.height, m.pitch = a.dptr, 0, 1, ex._zero[i], 1, 0
                    node = check(cu.cuGraphAddMemsetNode(self.graph, prev, len(prev), m, rt.context),
                                 "cuGraphAddMemsetNode (a kernel's scratch)")
                    prev = [node]
            base = {"ext": ext, "temp": temps, "const": ex._const_ptrs}
            for (launch, _), srcs, offs in zip(ex.launchers, ex._sources, self.offsets):
                ptrs = [base[kind][e] + off for (kind, e), off in zip(srcs, offs)]
                args = _NodeArgs(launch, ptrs)
                params = kernel_node_params(cu, launch, args.addr)
                node = check(cu.cuGraphAddKernelNode(self.graph, prev, len(prev), params),
                             f"cuGraphAddKernelNode for {launch.label}")
                self.nodes.append((node, params, args, launch))
                prev = [node]
            for p in temps:
                if p:
                    node = check(cu.cuGraphAddMemFreeNode(self.graph, prev, len(prev), cu.CUdeviceptr(p)),
                                 "cuGraphAddMemFreeNode")
                    prev = [node]
            self.exec = check(cu.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")
        except BaseException:
            self.close()
            raise
        self._exec_int = int(self.exec)
        self._raw = _rtcuda.graph_launcher()
        self.what = "; ".join(l.label for _, _, _, l in self.nodes)

    def launch(self, ext: tuple, stream, handle: int):
        """Point the graph at ``ext`` (operands..., output) and replay it on ``stream``.

        Returns how many kernel nodes were updated, or None (launching nothing) when the
        graph has been closed meanwhile.
        """
        cu = self.cu
        updated = 0
        with self.lock:
            if self.closed:
                return None
            if ext != self.last:
                last, self.last = self.last, self._stale  # if an update fails, redo them all
                for n in changed_nodes(self.slots, last, ext):
                    node, params, args, launch = self.nodes[n]
                    for h, e in self.slots[n]:
                        args.ptrs[h].value = ext[e] + self.offsets[n][h]
                    args.repoint()
                    check(cu.cuGraphExecKernelNodeSetParams(self.exec, node, params),
                          f"updating the CUDA graph node of {launch.label}")
                    updated += 1
                self.last = ext
            if self._raw is not None:
                rc = self._raw(self._exec_int, handle)
                err = cu.CUresult(rc) if rc else cu.CUresult.CUDA_SUCCESS
            else:
                err, = cu.cuGraphLaunch(self.exec, stream)
        if err != cu.CUresult.CUDA_SUCCESS:
            check((err,), f"launching the CUDA graph of {self.what}")
        return updated

    def close(self) -> None:
        """Destroy the instantiation, then the graph (a running replay finishes first)."""
        with self.lock:
            self.closed = True
            try:
                if self.exec is not None:
                    self.cu.cuGraphExecDestroy(self.exec)
                if self.graph is not None:
                    self.cu.cuGraphDestroy(self.graph)
            except Exception:  # interpreter shutdown: the driver may be gone
                pass
            self.exec = self.graph = None


class CudaExecutable:
    """A Plan compiled for one device.

    ``calls``, ``graph_builds``, ``graph_launches``, ``graph_updates`` and ``graph_error``
    say which path calls took (read by tests and benchmarks).
    """

    def __init__(self, plan: Plan, rt: CudaRuntime):
        from .codegen.cuda.emit import compile_options, emit_step
        self.plan, self.rt = plan, rt
        self.temps = [(i, b.size * b.dtype.itemsize) for i, b in enumerate(plan.buffers) if b.role == "temp"]
        self.inputs = [(i, b.index) for i, b in enumerate(plan.buffers) if b.role == "input"]
        self.empty = int(np.prod(plan.out_shape, dtype=np.int64)) == 0
        self.kernels, self.launchers, self._tables, self._step_tables = [], [], [], []
        options = compile_options(rt.arch)
        # an alias is its root buffer's pointer plus a byte offset, resolved on every call;
        # a const buffer (complex_as_real's signs) is uploaded once, like the kernel tables
        self.aliases = [(i, w, off) for i, (w, off) in alias_roots(plan).items()]
        self._template = [0] * len(plan.buffers)
        self._zero = {}  # scratch buffer (index past plan.buffers) -> bytes zeroed before its launch
        self._const_ptrs = []
        for i, b in enumerate(plan.buffers):
            if b.role == "const":
                host = np.ascontiguousarray(np.array(b.data, dtype=b.dtype))
                p = rt.alloc_persistent(host.nbytes)
                self._tables.append(p)
                rt.upload(p, host, rt.stream(0))
                self._template[i] = p
                self._const_ptrs.append(p)
        for n, step in enumerate(plan.steps):
            kernel = emit_step(plan, step, rt.arch)
            fn = rt.function(kernel, options)
            ptrs = self._upload_tables(kernel.tables)
            self._step_tables.append(ptrs)
            label = f"step {n} ({step.text}, strategy={step.strategy}, kernel {kernel.name})"
            self.kernels.append(kernel)
            which = (step.result, *step.operands)
            if kernel.scratch:  # a private intermediate of the launch, passed after the operands
                which += (len(self._template),)
                self.temps.append((len(self._template), kernel.scratch))
                self._zero[len(self._template)] = kernel.scratch_zero
                self._template.append(0)
            self.launchers.append((Launcher(rt, fn, kernel, kernel.meta(ptrs), len(which), label), which))
        self.temp_bytes = sum(n for _, n in self.temps)
        # kernels that load 16-byte pieces need their operands 16-byte aligned; a call
        # with an unaligned one runs their element-path twins (compiled on first need)
        self._aligned = any(k.fallback is not None for k in self.kernels)
        self._twins: dict = {}
        self._sources = arg_sources(plan)
        self._offsets = arg_offsets(plan)
        temp_slot = {i: j for j, (i, _) in enumerate(self.temps)}
        for n, (_, which) in enumerate(self.launchers):
            if len(which) > 1 + len(plan.steps[n].operands):  # the scratch: ("temp", j), no offset
                if self._sources is not None:
                    self._sources[n] += (("temp", temp_slot[which[-1]]),)
                self._offsets[n] += (0,)
        # a kernel that loads 16-byte pieces through an alias 4 or 8 bytes into its buffer
        # never gets that alignment: such a step always runs its element-path twin
        if self._aligned:
            for n, offs in enumerate(self._offsets):
                if any(o & 15 for o in offs):
                    twin = self._twin(n, list(offs))
                    if twin is not None:
                        self.launchers[n] = (twin, self.launchers[n][1])
        # Whether graphs may ever be used; the per-call switches are checked in __call__.
        self._graphable = (not self.empty and self._sources is not None
                           and graph_wanted(len(self.launchers), self.temp_bytes, GRAPH_AFTER_CALLS,
                                            True, False))
        self._graphs: dict = {}  # stream handle -> _Graph
        self._graph_lock = threading.Lock()
        self.calls = self.graph_builds = self.graph_launches = self.graph_updates = 0
        self.graph_error = None

    def __call__(self, input_ptrs, out_ptr: int, stream) -> None:
        """Run every step on ``stream``; returns without synchronising."""
        if self.empty:
            return
        calls = self.calls
        self.calls = calls + 1
        if self._aligned and any(p & 15 for p in (*input_ptrs, out_ptr)):
            self._direct(input_ptrs, out_ptr, stream, unaligned=True)
            return
        # graph_wanted(), with the parts fixed for this plan folded into _graphable
        if (self._graphable and calls >= GRAPH_AFTER_CALLS and _GRAPHS[0]
                and not _rtcuda._SYNC_EACH_STEP
                and not _rtcuda.stream_capturing(stream, handle := int(stream))):
            ext = (*input_ptrs, out_ptr)
            g = self._graphs.get(handle)
            if g is None:
                g = self._graph_for(handle, ext)
            if g is not None:
                updated = g.launch(ext, stream, handle)
                if updated is not None:
                    self.graph_updates += updated
                    self.graph_launches += 1
                    return
        self._direct(input_ptrs, out_ptr, stream)

    def _direct(self, input_ptrs, out_ptr: int, stream, unaligned: bool = False) -> None:
        ptrs = self._template[:]
        for i, k in self.inputs:
            ptrs[i] = input_ptrs[k]
        ptrs[self.plan.output] = out_ptr
        temps = []
        try:
            for i, nbytes in self.temps:
                ptrs[i] = self.rt.alloc(nbytes, stream)
                temps.append(ptrs[i])
                if i in self._zero:
                    self.rt.zero(ptrs[i], self._zero[i], stream)
            for i, w, off in self.aliases:
                ptrs[i] = ptrs[w] + off
            for n, (launch, which) in enumerate(self.launchers):
                args = [ptrs[w] for w in which]
                if unaligned:
                    launch = self._twin(n, args) or launch
                launch(args, stream)
        finally:
            for p in temps:
                self.rt.free(p, stream)

    def _upload_tables(self, tables) -> list:
        """Device copies of a kernel's int64 offset tables (kept for the executable's life)."""
        rt, ptrs = self.rt, []
        for t in tables:
            t = np.ascontiguousarray(t, dtype=np.int64)
            p = rt.alloc_persistent(t.nbytes)
            rt.upload(p, t, rt.stream(0))
            ptrs.append(p)
        self._tables += ptrs
        rt.synchronize(rt.stream(0), "table upload")
        return ptrs

    def _twin(self, n: int, args):
        """Step n's launcher for these pointers: None when its own kernel takes them."""
        kernel = self.kernels[n]
        use = kernel.launchable(args)
        if use is kernel:
            return None
        launch = self._twins.get(use.name)
        if launch is None:
            from .codegen.cuda.emit import compile_options
            own = self.launchers[n][0]
            fn = self.rt.function(use, compile_options(self.rt.arch))
            # the twin has its own tile counts and mostly the step's tables (same groups);
            # a twin whose tables differ (stream_mma's threads' stores beside its C boxes:
            # C's offsets where the box kernel has box coordinates) gets its own uploaded
            tables = self._step_tables[n]
            if len(use.tables) != len(kernel.tables) or any(
                    a is not b and not np.array_equal(a, b) for a, b in zip(use.tables, kernel.tables)):
                tables = self._upload_tables(use.tables)
            # (a scratch of the kernel's own, passed last, is not the twin's parameter)
            nptrs = len(args) - (1 if kernel.scratch and not use.scratch else 0)
            launch = Launcher(self.rt, fn, use, use.meta(tables), nptrs,
                              own.label + f" [unaligned operands: {use.name}]")
            self._twins[use.name] = launch
        return launch

    def _graph_for(self, key: int, ext: tuple):
        """Stream ``key``'s graph, built now (pointing at ``ext``) if it has none; None on failure."""
        with self._graph_lock:
            g = self._graphs.get(key)
            if g is not None or not self._graphable:
                return g
            try:
                g = _Graph(self, ext)
            except Exception as e:
                self._graphable = False
                self.graph_error = f"{type(e).__name__}: {e}"
                steps = "; ".join(l.label for l, _ in self.launchers)
                warnings.warn(f"einc: could not build a CUDA graph for {steps} ({self.graph_error}); "
                              f"using direct launches", RuntimeWarning, stacklevel=4)
                return None
            while len(self._graphs) >= GRAPH_MAX_STREAMS:
                self._graphs.pop(next(iter(self._graphs))).close()
            self._graphs[key] = g
            self.graph_builds += 1
            return g

    def release_graphs(self) -> None:
        """Destroy every CUDA graph of this executable (later calls build them again)."""
        with self._graph_lock:
            graphs, self._graphs = list(self._graphs.values()), {}
        for g in graphs:
            g.close()

    def __del__(self):
        try:
            for g in list(getattr(self, "_graphs", {}).values()):
                g.close()
            for p in self._tables:
                self.rt.cu.cuMemFree(self.rt.cu.CUdeviceptr(p))
        except Exception:
            pass


def graph_memory(ordinal: int = 0) -> dict:
    """Bytes the driver's graph memory pool holds: ``used`` by graphs now, ``reserved`` in all."""
    from .runtime.cuda import runtime
    rt = runtime(ordinal)
    rt.make_current()
    attr = rt.cu.CUgraphMem_attribute
    get = lambda a, name: int(check(rt.cu.cuDeviceGetGraphMemAttribute(rt.device, a), name))
    return {"used": get(attr.CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, "cuDeviceGetGraphMemAttribute(used)"),
            "reserved": get(attr.CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
                            "cuDeviceGetGraphMemAttribute(reserved)")}


def trim_graph_memory(ordinal: int = 0) -> None:
    """Return the graph memory pool's unused memory (CUDA graphs' intermediates) to the device."""
    from .runtime.cuda import runtime
    rt = runtime(ordinal)
    rt.make_current()
    check(rt.cu.cuDeviceGraphMemTrim(rt.device), "cuDeviceGraphMemTrim")


def trim_memory(ordinal: int = 0) -> None:
    """Return every byte einc's pools keep unused to the device: the graph memory pool and
    the stream-ordered pool of the direct path (which keeps up to
    runtime.cuda.POOL_KEEP_FRACTION of the device between calls)."""
    from .runtime.cuda import runtime
    trim_graph_memory(ordinal)
    rt = runtime(ordinal)
    check(rt.cu.cuMemPoolTrimTo(rt.pool, 0), "cuMemPoolTrimTo")
