"""Run a Plan on the CPU: compile (or fetch) each step's kernel once, then call them.

An Executable holds everything a repeated call needs — function pointers, extents,
strides and GEMM offset tables as ready ctypes/numpy arrays — so a call only gathers
data pointers, allocates intermediates and makes one foreign call per step.
"""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .codegen.llvm.loops import LoopNestKey, emit_loops
from .ir import Plan, Step, offset_table
from .runtime.arrays import data_pointer
from .runtime.cpu import jit
from .runtime.pyentry import kernel_builtin
from .skinny_cpu import SKINNY_SPLIT_FINE, skinny_rows_tables, skinny_tables  # noqa: F401 (tests use them here)

_VP = ctypes.c_void_p


def loop_key(step: Step, dtypes) -> LoopNestKey:
    """The structural key of a generic/reduce step (what its kernel specialises on)."""
    kinds, _, _, acc, unit = step.config
    return LoopNestKey(tuple(d.name for d in dtypes[1:]), dtypes[0].name,
                       step.compute.name, kinds, acc, unit)


def gett_tables(step: Step):
    """(dims, tab, swapped) for the GEMM kernel: each mode group flattened to offsets.

    The kernel stores C fastest along N. When C is unit-stride along M instead (a
    column-major output), compute Cᵀ = Bᵀ·Aᵀ: swap the operands and the M/N groups, so
    the write-back stays vectorised and clear of cache-set conflicts.
    """
    groups = {g: [j for j, m in enumerate(step.modes) if m.kind == g] for g in ("batch", "m", "n", "k")}

    def offsets(group, t):
        return offset_table([step.modes[j].extent for j in groups[group]], [step.strides[t][j] for j in groups[group]])

    unit = lambda o: o.size > 1 and bool(np.all(np.diff(o) == 1))
    # free groups in C's order (a unit-stride run of C where the tile stores vectors)
    for g in ("m", "n"):
        groups[g].sort(key=lambda j: -abs(step.strides[0][j]))
    mC, nC = offsets("m", 0), offsets("n", 0)
    swapped = unit(mC) and not unit(nC)
    a, b, m, n = (2, 1, "n", "m") if swapped else (1, 2, "m", "n")
    # K in the packed A operand's order when B's columns are contiguous anyway: A panels
    # then copy contiguous k runs (ccsd lki,kjl->ji: l is kjl's unit stride, the plan's
    # order made k innermost; 8.9 -> 7.7 ms); else in B's, whose panels gather columns
    # and need neighbouring k close (lik,jkl->ji: A's order measured 10.8 -> 13.0 ms)
    groups["k"].sort(key=lambda j: -abs(step.strides[a if unit(offsets(n, b)) else b][j]))
    dims = np.array([offsets("batch", 0).size, offsets(m, 0).size, offsets(n, 0).size,
                     offsets("k", 1).size], dtype=np.int64)
    tab = np.concatenate([offsets("batch", a), offsets("batch", b), offsets("batch", 0),
                          offsets(m, a), offsets(m, 0), offsets(n, b), offsets(n, 0),
                          offsets("k", a), offsets("k", b)])
    return dims, tab, swapped


def step_dtypes(plan: Plan, step: Step) -> list:
    """Dtypes of a step's tensors: the result first, then its operands."""
    return [plan.buffers[step.result].dtype] + [plan.buffers[o].dtype for o in step.operands]


def kernel_source(plan: Plan, step: Step):
    """(structural key, build) for a step's CPU kernel; build() -> (IR text, name)."""
    if step.strategy == "gett":
        from .codegen.llvm.gett import emit_gett
        bits, dt = jit().host_vector_bits(), step.compute
        sk = skinny_tables(step, step_dtypes(plan, step))
        if sk is not None:
            from .codegen.llvm.skinny import emit_skinny
            return ("skinny", dt.name, sk[4], sk[3]), lambda: emit_skinny(dt, sk[4], sk[3])
        sr = skinny_rows_tables(step, step_dtypes(plan, step))
        if sr is not None:
            from .codegen.llvm.skinny_rows import emit_skinny_rows
            return ("skinny-rows", dt.name, sr[4], sr[3]), lambda: emit_skinny_rows(dt, sr[4], sr[3])
        src = step_dtypes(plan, step)[1]  # both operands' (plan._choose: equal); int8 -> int32 C
        return ("gett", dt.name, src.name, bits), lambda: emit_gett(dt, bits, src)
    key = loop_key(step, step_dtypes(plan, step))
    return key, lambda: emit_loops(key)


PARALLEL_MIN_WORK = 1 << 21  # multiply-adds below which a second thread costs more than it saves
_POOL = None
_POOL_LOCK = threading.Lock()


def num_threads() -> int:
    """Worker threads for large steps: ``$EINC_NUM_THREADS`` or the core count."""
    try:
        return max(1, int(os.environ.get("EINC_NUM_THREADS", "0")) or (os.cpu_count() or 1))
    except ValueError:
        return os.cpu_count() or 1


def _pool():
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(num_threads(), thread_name_prefix="einc")
    return _POOL


def _forget_pool_after_fork():
    # a forked child inherits the pool object but none of its threads: work submitted
    # to it would wait forever (and the lock may have been held by a thread that is gone)
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _column_chunks(n: int, work: int, align: int = 32):
    """Split columns [0, n) into one range per thread (ctypes calls release the GIL)."""
    threads = min(num_threads(), max(1, n // align))
    if work < PARALLEL_MIN_WORK or threads == 1:
        return [(0, n)]
    step = -(-n // threads)
    step = -(-step // align) * align
    return [(i, min(n, i + step)) for i in range(0, n, step)]


class _Claim:
    """Parts of one step claimed one at a time by whichever thread is free, the caller too.

    The caller never waits for a pool thread that has not started: on a host whose other
    core is busy (another process, OpenBLAS spinning) a woken worker may get no core until
    the caller blocks, and a fixed split then ran both halves one after the other, slower
    than one thread (ccsd_t 0.62 ms on 2 threads against 0.55 on 1). Here the caller takes
    the late worker's parts; a worker that comes too late finds nothing left and returns.
    """

    __slots__ = ("part", "ptrs", "chunks", "next", "left", "lock", "done", "error")

    def __init__(self, part, ptrs, chunks):
        self.part, self.ptrs, self.chunks = part, ptrs, chunks
        self.next, self.left, self.error = 0, len(chunks), None
        self.lock, self.done = threading.Lock(), threading.Event()

    def drain(self):
        while True:
            with self.lock:
                i = self.next
                if i >= len(self.chunks):
                    return
                self.next = i + 1
            try:
                self.part(self.ptrs, *self.chunks[i])
            except BaseException as e:  # re-raised on the calling thread
                self.error = e
            with self.lock:
                self.left -= 1
                if self.left == 0:
                    self.done.set()


def _split(part, ptrs, chunks):
    """part(ptrs, *chunk) for every chunk, on the calling thread and up to num_threads() - 1
    pool threads, each claiming the next chunk when it is free (_Claim)."""
    if not chunks:
        return
    job = _Claim(part, ptrs, chunks)
    pool = _pool()
    for _ in range(min(num_threads(), len(chunks)) - 1):
        pool.submit(job.drain)
    job.drain()
    job.done.wait()
    if job.error is not None:
        raise job.error


def _ranged_runner(fn, bufs, dims, tab, work_elems, dt, chunks):
    """A gett or skinny kernel's run(ptrs): fn(C, A, B, dims, tables, workspace, lo, hi) over
    the column or row ranges ``chunks``, split over the pool when there are several (each
    thread with its own workspace)."""
    c, a, b = bufs
    dp, tp = dims.ctypes.data, tab.ctypes.data
    nbytes = work_elems * np.dtype(dt).itemsize

    def part(ptrs, r0, r1):
        fn(ptrs[c], ptrs[a], ptrs[b], dp, tp, _WORK.ptr(nbytes), r0, r1)

    def run(ptrs, _keep=(dims, tab)):
        if len(chunks) <= 1:
            return part(ptrs, *(chunks[0] if chunks else (0, 0)))
        _split(part, ptrs, chunks)
    return run


def _k_split_pays(dims, work, compute, result) -> bool:
    """Split K, not N, across threads: a GEMM step whose K dwarfs N (ccsd lik,jkl->ji:
    M 126, N 128, K 16384). Split by columns, every thread packs all of A (M x K) and
    only a sliver of B; split by K, each packs its own share of both, at the price of a
    partial C per thread and their sum. Real and complex floating steps only (an integer
    C is stored truncated, so partial sums could not be added afterwards)."""
    nb, m, n, k = (int(v) for v in dims)
    return (num_threads() > 1 and work >= PARALLEL_MIN_WORK and compute == result and compute.kind in "fc"
            and k >= KSPLIT_MIN_RATIO * n and k >= 2 * num_threads() and 0 < nb * m * n <= KSPLIT_MAX_C)


def _k_split_runner(fn, bufs, dims, tab, work_elems, dt):
    """A gett step with K cut in one range per thread: each thread's kernel writes a compact
    partial C (its own tables: C offsets b*M*N + m*N + n, the K tables sliced), then the
    partials are summed into C through C's real offsets."""
    c, a, b = bufs
    nb, m, n, k = (int(v) for v in dims)
    parts = min(num_threads(), k)
    cut = np.cumsum([0, nb, nb, nb, m, m, n, n, k, k])
    seg = [tab[lo:hi] for lo, hi in zip(cut, cut[1:])]
    bA, bB, bC, mA, mC, nB, nC, kA, kB = seg
    compact = [np.arange(nb, dtype=np.int64) * m * n, np.arange(m, dtype=np.int64) * n, np.arange(n, dtype=np.int64)]
    tables = []
    for t in range(parts):
        k0, k1 = k * t // parts, k * (t + 1) // parts
        d = np.array([nb, m, n, k1 - k0], dtype=np.int64)
        tb = np.concatenate([bA, bB, compact[0], mA, compact[1], nB, compact[2], kA[k0:k1], kB[k0:k1]])
        tables.append((d, tb, d.ctypes.data, tb.ctypes.data))
    idx = (bC[:, None, None] + mC[None, :, None] + nC[None, None, :]).ravel()
    lo = int(idx.min())
    span, idx = int(idx.max()) - lo + 1, idx - lo
    dense = span == idx.size and bool(np.all(idx == np.arange(span)))
    item = np.dtype(dt).itemsize

    nbytes = work_elems * np.dtype(dt).itemsize

    def part(ptrs, t, into):
        dp, tp = tables[t][2:]
        fn(into, ptrs[a], ptrs[b], dp, tp, _WORK.ptr(nbytes), 0, n)

    def run(ptrs):
        partial = np.empty((parts, nb * m * n), dtype=dt)  # per call: concurrent calls share the runner
        p0 = partial.ctypes.data
        _split(part, ptrs, [(t, p0 + t * partial.strides[0]) for t in range(parts)])
        cview = np.frombuffer((ctypes.c_char * (span * item)).from_address(ptrs[c] + lo * item), dtype=dt)
        if dense:
            np.sum(partial, axis=0, out=cview)
        else:
            cview[idx] = partial.sum(axis=0)
    return run


ENTRY_NOGIL_MIN = 1 << 14  # loop points from which the builtin entry releases the GIL
KSPLIT_MIN_RATIO = 4  # K >= this x N: split K across threads instead of N (gett)
KSPLIT_MAX_C = 1 << 18  # C elements up to which each thread's partial C is a temporary
LOOP_PARALLEL_MIN = 1 << 20  # loop-nest points below which one thread is faster
CHUNKS_PER_THREAD = 4


def _loop_chunks(step: Step, ext, strides, itemsizes):
    """Split a loop-nest step's outermost (free) loop across threads, or None.

    Each part gets its own extents (the chosen loop shortened) and byte offsets into every
    tensor; parts write disjoint outputs, so the compiled kernel runs unchanged on each.
    """
    kinds = step.config[0]
    threads = num_threads()
    total = int(np.prod(ext, dtype=np.int64)) if ext else 0
    # only the outermost loop, and only if it is free: each thread then streams its own
    # contiguous block (splitting an inner loop, as in `ij->j`, measured slower than one thread)
    if threads == 1 or total < LOOP_PARALLEL_MIN or not kinds or kinds[0] != "f":
        return None
    l = 0
    n = ext[l]
    if n < 2 * threads:
        return None
    # CHUNKS_PER_THREAD parts per thread, each taken by whichever worker is free: on a busy
    # machine one descheduled worker then delays only its current part, not half the step
    pieces = min(n // 2, threads * CHUNKS_PER_THREAD)
    bounds = [n * t // pieces for t in range(pieces + 1)]
    parts = []
    for lo, hi in zip(bounds, bounds[1:]):
        e = list(ext)
        e[l] = hi - lo
        offsets = [lo * row[l] * size for row, size in zip(strides, itemsizes)]
        parts.append((offsets, (ctypes.c_int64 * len(e))(*e),
                      (ctypes.c_int64 * max(1, len(strides) * len(e)))(*[x for row in strides for x in row])))
    return parts


class _Workspace(threading.local):
    """Per-thread scratch for packed GEMM panels (calls on other threads never share it)."""

    size, addr = 0, 0  # bytes usable from addr (64-byte aligned) in this thread's buffer

    def ptr(self, nbytes: int) -> int:
        """Address of >= ``nbytes`` of this thread's scratch (a small GEMM's call paid
        3 us of ndarray slicing and ``.ctypes.data`` for it; now an attribute read)."""
        if nbytes > self.size:
            self.buf = np.empty(nbytes + 64, dtype=np.uint8)
            base = self.buf.ctypes.data
            self.addr, self.size = base + (-base) % 64, nbytes
        return self.addr


_WORK = _Workspace()


class Executable:
    """A Plan with its kernels compiled and its arguments marshalled."""

    def __init__(self, plan: Plan):
        self.plan = plan
        # a step of the CUDA smallmn kernel's flat split writes one partial tile per part into
        # its temporary (plan.smallmn_steps); run here it writes the whole sum into part 0's,
        # so the other parts' must read as zeros for the reduce over parts that follows
        parted = {s.result for s in plan.steps if s.option("parts") is not None}
        self.temps = [(i, b.size, b.dtype, i in parted) for i, b in enumerate(plan.buffers) if b.role == "temp"]
        self.inputs = [(i, b.index) for i, b in enumerate(plan.buffers) if b.role == "input"]
        # an alias is another buffer seen as its dtype, from an element offset (data=(offset,))
        self.aliases = [(i, b.index, (b.data[0] if b.data else 0) * b.dtype.itemsize)
                        for i, b in enumerate(plan.buffers) if b.role == "alias"]
        self._consts = [np.array(b.data, dtype=b.dtype) for b in plan.buffers if b.role == "const"]
        self.runners = [self._runner(s) for s in plan.steps]
        self.empty = int(np.prod(plan.out_shape, dtype=np.int64)) == 0
        self.ptr_template = [0] * len(plan.buffers)
        consts = iter(self._consts)
        for i, b in enumerate(plan.buffers):
            if b.role == "const":
                self.ptr_template[i] = next(consts).ctypes.data
        self.fast = self._direct()

    def _direct(self):
        """(arrays, out) -> None for a plan of one loop kernel over the operands and the
        output only: pointers go straight to the kernel, no pointer list is built (a cached
        8x8 call costs a few µs, and this is one of them). None for any other plan."""
        if self.empty or self.temps or self.aliases or len(self.runners) != 1:
            return None
        direct = getattr(self.runners[0], "direct", None)
        if direct is None:
            return None
        fn, addr, order, e, s, points = direct
        where = dict(self.inputs)
        src = [-1 if b == self.plan.output else where.get(b) for b in order]
        if src[0] != -1 or any(k is None or k < 0 for k in src[1:]):
            return None
        # a builtin reading the pointers itself (~0.1 µs a call against ~0.8 through ctypes);
        # it releases the GIL as ctypes does, except around kernels too short to be worth it
        builtin = kernel_builtin(addr, src[1:], e, s, release=points >= ENTRY_NOGIL_MIN)
        if builtin is not None:
            return builtin
        dp = data_pointer
        # plain addresses convert faster than ctypes arrays (~0.2 µs a call); the arrays
        # stay alive in self.runners
        e, s = ctypes.addressof(e), ctypes.addressof(s)
        if len(src) == 2:
            kx = src[1]
            return lambda arrays, out: fn(dp(out), dp(arrays[kx]), e, s)
        kx, ky = src[1], src[2]
        return lambda arrays, out: fn(dp(out), dp(arrays[kx]), dp(arrays[ky]), e, s)

    def _runner(self, step: Step):
        key, build = kernel_source(self.plan, step)
        addr = jit().get(key, build)
        sk = skinny_tables(step, step_dtypes(self.plan, step)) if step.strategy == "gett" else None
        if sk is not None:
            return self._skinny_runner(step, addr, *sk)
        sr = skinny_rows_tables(step, step_dtypes(self.plan, step)) if step.strategy == "gett" else None
        if sr is not None:
            return self._rows_runner(step, addr, *sr)
        if step.strategy == "gett":
            from .codegen.llvm.gett import gett_workspace_elems
            bits = jit().host_vector_bits()
            dt = step.compute
            fn = ctypes.CFUNCTYPE(None, _VP, _VP, _VP, _VP, _VP, _VP, ctypes.c_int64, ctypes.c_int64)(addr)
            dims, tab, swapped = gett_tables(step)
            work_elems = gett_workspace_elems(dt, bits, step_dtypes(self.plan, step)[1])
            n = int(dims[2])
            c, (a, b) = step.result, step.operands[::-1] if swapped else step.operands
            work = int(np.prod(dims, dtype=np.int64))
            if _k_split_pays(dims, work, dt, self.plan.buffers[c].dtype):
                return _k_split_runner(fn, (c, a, b), dims, tab, work_elems, dt)
            chunks = _column_chunks(n, work)
            return _ranged_runner(fn, (c, a, b), dims, tab, work_elems, dt, chunks)
        nt = len(step.operands) + 1
        fn = ctypes.CFUNCTYPE(None, *([_VP] * (nt + 2)))(addr)
        _, ext, strides, _, _ = step.config
        ext_a = (ctypes.c_int64 * max(1, len(ext)))(*ext)
        str_a = (ctypes.c_int64 * max(1, nt * len(ext)))(*[s for row in strides for s in row])
        order = (step.result, *step.operands)
        parts = _loop_chunks(step, ext, strides, [d.itemsize for d in step_dtypes(self.plan, step)])
        if parts:
            keep = [(e, st) for _, e, st in parts]

            def part(ptrs, offsets, e, st):
                fn(*[ptrs[i] + off for i, off in zip(order, offsets)], e, st)

            def run_parallel(ptrs, _keep=keep):
                _split(part, ptrs, parts)
            return run_parallel

        points = int(np.prod(ext, dtype=np.int64)) if ext else 1
        if len(order) == 2:
            r, x = order
            run2 = lambda ptrs, _k=(ext_a, str_a): fn(ptrs[r], ptrs[x], ext_a, str_a)
            run2.direct = (fn, addr, order, ext_a, str_a, points)
            return run2
        if len(order) == 3:
            r, x, y = order
            run3 = lambda ptrs, _k=(ext_a, str_a): fn(ptrs[r], ptrs[x], ptrs[y], ext_a, str_a)
            run3.direct = (fn, addr, order, ext_a, str_a, points)
            return run3

        def run(ptrs, _keep=(ext_a, str_a)):
            fn(*[ptrs[i] for i in order], ext_a, str_a)
        return run

    def _skinny_runner(self, step: Step, addr, dims, tab, big, NP, bits):
        """Rows of the rest group split over threads (4 parts per thread when it pays)."""
        from .codegen.llvm.skinny import skinny_workspace_elems
        fn = ctypes.CFUNCTYPE(None, _VP, _VP, _VP, _VP, _VP, _VP, ctypes.c_int64, ctypes.c_int64)(addr)
        X, R, N, K, Y = (int(v) for v in dims[[0, 1, 2, 3, 5]])
        dt = step.compute
        W = bits // (8 * dt.itemsize)
        packed = {1: R * K * -(-X // W) * W, 2: -(-K // W) * W * W}.get(int(dims[8]), 0)
        work_elems = skinny_workspace_elems(N, K, packed)
        rows = R * -(-Y // W) if Y > 1 else R  # the box's rows: y blocks x rest
        c, a, b = step.result, step.operands[big - 1], step.operands[2 - big]
        work = X * Y * R * N * K
        threads = num_threads() if work >= PARALLEL_MIN_WORK else 1
        # a millisecond step pays ~30 us per pool task: one part per thread then, the
        # caller's own thread running the last (4 per thread only for long steps)
        per = CHUNKS_PER_THREAD if work >= SKINNY_SPLIT_FINE else 1
        pieces = min(rows, threads * per if threads > 1 else 1)
        # equal work per part: a box row's work is its y block's height (the last is ragged)
        weight = np.minimum(W, Y - W * (np.arange(rows) // R)) if Y > 1 else np.ones(rows)
        cum = np.concatenate([[0], np.cumsum(weight)])
        bounds = [int(np.searchsorted(cum, cum[-1] * t / pieces)) for t in range(pieces)] + [rows]
        chunks = [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]
        return _ranged_runner(fn, (c, a, b), dims, tab, work_elems, dt, chunks)

    def _rows_runner(self, step: Step, addr, dims, tab, big, NV, bits):
        """Rows split over threads, one part per thread (the caller runs the last)."""
        fn = ctypes.CFUNCTYPE(None, _VP, _VP, _VP, _VP, _VP, _VP, ctypes.c_int64, ctypes.c_int64)(addr)
        R, N, K = (int(v) for v in dims)
        dt = step.compute
        work_elems = max(1, K * NV * (bits // (8 * dt.itemsize)))
        c, a, b = step.result, step.operands[big - 1], step.operands[2 - big]
        threads = num_threads() if R * N * K >= PARALLEL_MIN_WORK else 1
        bounds = [R * t // threads for t in range(threads + 1)]
        chunks = [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]
        return _ranged_runner(fn, (c, a, b), dims, tab, work_elems, dt, chunks)

    def __call__(self, arrays, out: np.ndarray) -> np.ndarray:
        if self.fast is not None:
            self.fast(arrays, out)
            return out
        if self.empty:
            return out
        ptrs = self.ptr_template[:]
        for i, k in self.inputs:
            ptrs[i] = data_pointer(arrays[k])
        ptrs[self.plan.output] = data_pointer(out)
        keep = []
        for i, size, dt, zeroed in self.temps:
            t = (np.zeros if zeroed else np.empty)(max(size, 1), dtype=dt)
            keep.append(t)
            ptrs[i] = data_pointer(t)
        for i, base, offset in self.aliases:
            ptrs[i] = ptrs[base] + offset
        for run in self.runners:
            run(ptrs)
        return out
