"""Run a SlicedPlan here, on a thread pool, or on a dask.distributed cluster.

Work is cut into the plan's fixed blocks (``SlicedPlan.blocks()``: consecutive slices of
one output slice, summed in order into one partial). A worker keeps, across every block
it runs, the operands (scattered once), the compiled per-slice plan and its temporaries
arena. The caller sums the partials of each output slice in block order whatever order
they finish in, so the answer is bitwise the same for any executor and worker count.

>>> import numpy as np, einc
>>> a, b = np.ones((64, 64)), np.ones((64, 64))
>>> r = einc.einsum("ij,jk->ik", a, b, memory_limit="40KiB", executor="local")
>>> float(r[0, 0])
64.0

``executor``: ``"local"`` (this thread, one block after another), a
``concurrent.futures.Executor`` (e.g. ``ThreadPoolExecutor(2)``) or a
``distributed.Client``; ``devices=[0, 1]`` starts (once per process) a local dask cluster
of one spawned worker process per entry, an int entry pinned to that GPU with
``CUDA_VISIBLE_DEVICES`` and a ``"cpu"`` entry a CPU worker. Without dask installed,
``devices`` of CPU entries run on a thread per entry.
"""
from __future__ import annotations

import atexit
import os
import threading
import uuid

import numpy as np

from .errors import EincValueError
from .runtime.arrays import data_pointer
from .slicing import SlicedPlan, plan_sliced

RETRIES = 2  # times dask re-runs a failed block (a lost worker, a fault) before giving up
FAULT_ENV = "EINC_FAULT_FILE"  # tests: the first block to find this file removes it and fails

_LOCK = threading.Lock()
_EXECUTABLES: dict = {}  # token -> Executable, shared by the threads of a process
_LOCAL = threading.local()  # per thread: token -> arena


class InjectedFault(RuntimeError):
    """The failure ``$EINC_FAULT_FILE`` asks for (exercises retries)."""


def _maybe_fault():
    path = os.environ.get(FAULT_ENV)
    if path:
        try:
            os.unlink(path)  # exactly one block wins the unlink, so it fails once
        except FileNotFoundError:
            return
        raise InjectedFault(f"injected fault ({FAULT_ENV}={path})")


def _executable(sp: SlicedPlan):
    ex = _EXECUTABLES.get(sp.token)
    if ex is None:
        from .execute import Executable
        with _LOCK:
            ex = _EXECUTABLES.get(sp.token)
            if ex is None:
                ex = _EXECUTABLES[sp.token] = Executable(sp.plan)
    return ex


def _arena(sp: SlicedPlan) -> int:
    """Base address of this thread's arena for ``sp`` (allocated once, 64-byte aligned)."""
    arenas = _LOCAL.__dict__.setdefault("arenas", {})
    buf = arenas.get(sp.token)
    if buf is None:
        buf = arenas[sp.token] = np.empty(sp.arena_bytes + 64, dtype=np.uint8)
    return buf.ctypes.data + (-buf.ctypes.data) % 64


def full_views(sp: SlicedPlan, arrays):
    """Each operand as a view of distinct labels (diagonals and broadcasts as strides)."""
    ext = dict(sp.extents)
    out = []
    for a, t, st, d in zip(arrays, sp.terms, sp.in_strides, sp.dtypes):
        a = np.asarray(a)
        if a.dtype != d:
            raise EincValueError(f"operand has dtype {a.dtype}; the sliced plan was made for {d}")
        out.append(np.lib.stride_tricks.as_strided(a, tuple(ext[c] for c in t),
                                                   tuple(s * d.itemsize for s in st)))
    return out


def slice_views(sp: SlicedPlan, views, k: int):
    """The operands of slice ``k``: views with the sliced labels fixed (no copies)."""
    value = dict(zip(sp.sliced, sp.slice_index(k)))
    # the trailing Ellipsis keeps a fully indexed operand a 0-d view, not a scalar copy
    return [v[tuple(value.get(c, slice(None)) for c in t) + (Ellipsis,)] for v, t in zip(views, sp.terms)]


def _run_slice(ex, sp: SlicedPlan, base: int, views, out):
    """One slice through the compiled per-slice plan, its temporaries in the arena."""
    if ex.fast is not None:
        ex.fast(views, out)
        return
    if ex.empty:
        return
    ptrs = ex.ptr_template[:]
    for i, k in ex.inputs:
        ptrs[i] = data_pointer(views[k])
    ptrs[ex.plan.output] = data_pointer(out)
    for i, off in sp.arena_offsets:
        ptrs[i] = base + off
    for i, b, offset in ex.aliases:  # (complex-as-real's real views: base + byte offset)
        ptrs[i] = ptrs[b] + offset
    for run in ex.runners:
        run(ptrs)


def pairwise_steps(sp: SlicedPlan):
    """The per-slice path as einsum steps: (operand ids, their label lists, result labels)."""
    terms = [[c for c in t if c not in sp.sliced] for t in sp.terms]
    out = [c for c in sp.output if c not in sp.sliced]
    live, steps = list(range(len(terms))), []
    for c in sp.path:
        ids = [live[i] for i in c]
        for i in sorted(c, reverse=True):
            del live[i]
        if not live:
            res = out
        else:
            need = set(out).union(*(terms[j] for j in live))
            res = list(dict.fromkeys(l for j in ids for l in terms[j] if l in need))
        terms.append(res)
        live.append(len(terms) - 1)
        steps.append((ids, [terms[j] for j in ids], res))
    return steps


def run_block_steps(sp: SlicedPlan, views, b: int):
    """Block ``b`` with one einc call per pairwise step on arrays of any library einc takes
    (torch CUDA tensors: the GPU); an intermediate is dropped once consumed, so live memory
    follows the path (the per-slice plan's arena lifetimes)."""
    from .api import einsum
    g, j0, j1 = sp.block_at(b)
    steps = pairwise_steps(sp)
    acc = None
    for j in range(j0, j1):
        value = dict(zip(sp.sliced, sp.slice_index(g * sp.per_group + j)))
        tensors = {i: v[tuple(value.get(c, slice(None)) for c in t) + (Ellipsis,)]
                   for i, (v, t) in enumerate(zip(views, sp.terms))}
        n = len(tensors)
        for ids, labels, res in steps:
            args = []
            for i, lab in zip(ids, labels):
                args += [tensors.pop(i) if i >= len(views) else tensors[i], lab]
            tensors[n] = einsum(*args, res, optimize=[tuple(range(len(ids)))])
            n += 1
        r = tensors.pop(n - 1)
        if acc is None:
            acc = r
        elif hasattr(acc, "add_"):  # torch: in place, on the device
            acc.add_(r)
        else:
            acc = acc + r
        del tensors, r
    return acc


def _gpu_views(sp: SlicedPlan, arrays):
    """The operands on this worker's GPU (copied once per plan), as torch views of the
    bound layouts (C-contiguous operands: the strides were planned for those)."""
    import torch
    cache = _LOCAL.__dict__.setdefault("gpu", {})
    if sp.token not in cache:
        if not all(np.asarray(a).flags.c_contiguous for a in arrays):
            raise EincValueError("GPU workers take C-contiguous operands")
        ext = dict(sp.extents)
        cache.clear()  # one plan's operands resident at a time
        cache[sp.token] = [torch.as_strided(torch.from_numpy(np.asarray(a)).cuda(), tuple(ext[c] for c in t), st)
                           for a, t, st in zip(arrays, sp.terms, sp.in_strides)]
    return cache[sp.token]


def run_block(sp: SlicedPlan, arrays, b: int) -> np.ndarray:
    """Block ``b``'s partial: its slices, in order, summed into one output slice."""
    _maybe_fault()
    if sp.plan.backend == "cuda":
        part = run_block_steps(sp, _gpu_views(sp, arrays), b)
        return part.cpu().numpy() if hasattr(part, "cpu") else np.asarray(part)
    g, j0, j1 = sp.block_at(b)
    ex, base = _executable(sp), _arena(sp)
    views = full_views(sp, arrays)
    acc = np.empty(sp.plan.out_shape, dtype=sp.plan.out_dtype)
    tmp = np.empty_like(acc) if j1 - j0 > 1 else None
    for j in range(j0, j1):
        dst = acc if j == j0 else tmp
        _run_slice(ex, sp, base, slice_views(sp, views, g * sp.per_group + j), dst)
        if dst is tmp:
            np.add(acc, tmp, out=acc)
    return acc


class _Fold:
    """Sums partials of each output slice in block order, whatever order they arrive in."""

    def __init__(self, sp: SlicedPlan):
        self.sp, self.next, self.waiting = sp, 0, {}
        ext = dict(sp.extents)
        shape = tuple(ext[c] for c in sp.output)
        self.result = np.zeros(shape, dtype=sp.plan.out_dtype)
        self.seen = set()

    def add(self, i, partial):
        self.waiting[i] = partial
        while self.next in self.waiting:
            part = self.waiting.pop(self.next)
            g = self.sp.block_at(self.next)[0]
            idx = np.unravel_index(g, self.sp.sliced_extents[:len(self.sp.stacked)]) if self.sp.stacked else ()
            where = dict(zip(self.sp.stacked, idx))
            dst = tuple(int(where[c]) if c in where else slice(None) for c in self.sp.output) + (Ellipsis,)
            if g in self.seen:
                np.add(self.result[dst], part, out=self.result[dst])
            else:
                self.result[dst] = part
                self.seen.add(g)
            self.next += 1


def run(sp: SlicedPlan, arrays, executor="local", slices=None, retries=RETRIES) -> np.ndarray:
    """The einsum ``sp`` plans, over ``arrays``, on ``executor`` (module docstring).

    ``slices``: run only the blocks covering the first that many slices (a partial sum, for
    timing). The result is numpy's einsum of ``arrays`` (bitwise the same on any executor).
    """
    order = range(sp.nblocks)
    if slices is not None:
        order = [i for i in order if sp.block_at(i)[0] * sp.per_group + sp.block_at(i)[1] < slices]
    order = list(order)
    fold = _Fold(sp)
    fold.next = order[0] if order else 0
    if executor == "local" or executor is None:
        for i in order:
            fold.add(i, run_block(sp, arrays, i))
    elif _is_dask_client(executor):
        _run_dask(sp, arrays, executor, order, fold, retries)
    elif hasattr(executor, "submit"):
        from concurrent.futures import as_completed
        futs = {executor.submit(run_block, sp, arrays, i): i for i in order}
        for f in as_completed(futs):
            fold.add(futs[f], f.result())
    else:
        raise EincValueError(f"executor={executor!r}: use 'local', a concurrent.futures.Executor "
                             "or a dask.distributed Client")
    return fold.result


def _is_dask_client(x) -> bool:
    return type(x).__name__ == "Client" and type(x).__module__.startswith("distributed")


def _run_dask(sp, arrays, client, order, fold, retries):
    from distributed import as_completed
    sp_f = client.scatter(sp, broadcast=True, hash=False)
    arr_f = client.scatter(list(np.asarray(a) for a in arrays), broadcast=True, hash=False)
    run_id = uuid.uuid4().hex[:8]  # a failed run's erred keys must not answer the next run
    futs = [client.submit(run_block, sp_f, arr_f, i, key=f"einc-block-{sp.token}-{run_id}-{i}",
                          retries=retries, pure=False) for i in order]
    index = {f.key: i for f, i in zip(futs, order)}
    try:
        for f in as_completed(futs):
            fold.add(index[f.key], f.result())
            f.release()
    finally:
        client.cancel(futs + [sp_f] + list(arr_f))


_CLUSTERS: dict = {}


def client_for(devices):
    """A dask Client of one spawned worker process per entry of ``devices`` (cached).

    An int entry is a GPU ordinal: that worker sees only it (``CUDA_VISIBLE_DEVICES``). A
    "cpu" entry is a CPU worker using its share of the cores for einc's threads.
    """
    key = tuple(devices)
    if key in _CLUSTERS:
        return _CLUSTERS[key][1]
    from distributed import Client, Nanny, Scheduler, SpecCluster
    threads = str(max(1, (os.cpu_count() or 1) // len(key)))
    workers = {}
    for i, d in enumerate(key):
        env = {"EINC_NUM_THREADS": threads}
        if d != "cpu":
            env["CUDA_VISIBLE_DEVICES"] = str(int(d))
        workers[f"einc-{i}"] = {"cls": Nanny, "options": {"nthreads": 1, "env": env, "silence_logs": 40,
                                                        "dashboard": False}}
    cluster = SpecCluster(workers=workers, scheduler={"cls": Scheduler, "options": {"dashboard": False}},
                          silence_logs=40)
    client = Client(cluster)
    _CLUSTERS[key] = (cluster, client)
    return client


@atexit.register
def _close_clusters():
    for cluster, client in _CLUSTERS.values():
        client.close()
        cluster.close()
    _CLUSTERS.clear()


def _devices_executor(devices):
    try:
        import distributed  # noqa: F401
    except ImportError:
        if any(d != "cpu" for d in devices):
            raise EincValueError("devices= with GPU ordinals needs dask.distributed "
                                 "(pip install 'einc[distributed]')") from None
        from concurrent.futures import ThreadPoolExecutor
        return ThreadPoolExecutor(len(devices))
    return client_for(devices)


def sliced_einsum(operands, memory_limit, dtype=None, optimize="auto", strategy=None,
                  executor=None, devices=None, out=None, slicer="auto", block=None, backend="cpu"):
    """einsum with a per-device memory bound, sliced and run on ``executor``/``devices``
    (``backend="cuda"``: the workers run slices on their GPU, one einc call per step)."""
    if devices is not None:
        devices = list(devices)
        if not devices or not all(d == "cpu" or (isinstance(d, int) and d >= 0) for d in devices):
            raise EincValueError(f"devices={devices!r}: use a list of GPU ordinals or 'cpu'")
        if executor is not None:
            raise EincValueError("pass executor= or devices=, not both")
        backend = "cuda" if any(d != "cpu" for d in devices) else backend
        executor = _devices_executor(devices)
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], [np.asarray(a) for a in operands[1:]]
    else:
        from .api import _split_args
        spec, arrays = _split_args(operands)
        subscripts, arrays = (spec.inputs, spec.output), [np.asarray(a) for a in arrays]
    sp = plan_sliced(subscripts, arrays, memory_limit, dtype=dtype, optimize=optimize, slicer=slicer,
                     block=block, strategy=strategy, backend=backend)
    result = run(sp, arrays, executor)
    if out is not None:
        np.copyto(out, result, casting="safe")
        return out
    return result[()] if result.ndim == 0 else result
