"""einsum on the CUDA backend: operands in place (device arrays) or copied (numpy)."""
from __future__ import annotations

import numpy as np

from .errors import EincShapeError, EincValueError
from .plan import is_fortran, row_major
from .runtime.device_arrays import (DeviceView, device_views, empty_like_library, is_device_array,
                                    torch_stream, view)
from .runtime.streams import Orderer, producers, same


def _fake(shape, dtype, strides_elems):
    """A zero-memory numpy stand-in with the right shape/strides/dtype for bind and plan."""
    from .ir import ArraySpec
    dt = np.dtype(dtype)
    return ArraySpec(tuple(shape), tuple(s * dt.itemsize for s in strides_elems), dt)


def _span(v: DeviceView):
    if not v.shape or min(v.shape) > 0:
        lo = sum(min(0, (n - 1) * s) for n, s in zip(v.shape, v.strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(v.shape, v.strides))
        return v.ptr + lo * v.itemsize, v.ptr + (hi + 1) * v.itemsize
    return v.ptr, v.ptr


MISS = object()


class Seen:
    """A fast-path miss that hands on the views it made (a DLPack producer is asked once)."""

    __slots__ = ("views", "handle")

    def __init__(self, views, handle):
        self.views, self.handle = views, handle


def _order_after_producers(rt, handle: int, views, explicit) -> bool:
    """Make stream ``handle`` wait for the streams that produced ``views`` (operands and
    out=); True when torch's current stream is not ``handle`` (its tensors need marking)."""
    torch_views = [v for v in views if v is not None and v.library == "torch"]
    others = [v for v in views if v is not None and v.library not in ("torch", "numpy")]
    if explicit is None and not others:
        return False  # all torch, on torch's current stream: nothing to order
    orderer = rt.__dict__.get("orderer")
    if orderer is None:
        orderer = rt.orderer = Orderer(rt)
    torch_cur = {}
    for v in torch_views:
        d = v.owner.device.index or 0
        if d not in torch_cur:
            torch_cur[d] = torch_stream(v)
    orderer.wait(handle, list(torch_cur.values()) + producers(others, None))
    return any(not same(t, handle) for t in torch_cur.values())


_EXTERNAL: dict = {}  # stream handle -> torch.cuda.ExternalStream (made once per handle)


def _mark_torch(handle: int, tensors) -> None:
    """Tell torch's caching allocator these tensors are in use on stream ``handle`` too, so
    their memory is not handed out again before einc's kernels there have finished."""
    s = _EXTERNAL.get(handle)
    if s is None:
        import torch
        s = _EXTERNAL[handle] = torch.cuda.ExternalStream(handle)
    for t in tensors:
        t.record_stream(s)


def _fast_key(subscripts, views, dtype, order, casting, optimize, memory_limit, strategy):
    return ("cuda-fast", subscripts, tuple([(v.shape, v.strides, v.dtype) for v in views]), dtype,
            order, casting, optimize if type(optimize) is str else repr(optimize), repr(memory_limit),
            strategy)


# The hottest path: a keyword-free call on plain torch CUDA tensors whose signature ran
# before. Keyed by (subscripts, then shape, stride, dtype, device index of each operand) ->
# (executable, out shape, torch dtype, torch device, device index); filled by
# fast_cuda_einsum (remember=True) once such a call has taken it. It skips the DeviceViews,
# the general key and the stream-ordering checks (all torch, torch's current stream: nothing
# to order), so a small cached call costs little more than its launch and torch.empty.
TORCH_HOT: dict = {}
TORCH_HOT_MAX = 4096
_TENSOR = None  # torch.Tensor, once a torch call has been seen
_RAW_STREAM = None  # torch._C._cuda_getCurrentRawStream


def _hot_key(subscripts, tensors) -> tuple:
    key = [subscripts]
    for x in tensors:
        key += (x.shape, x.stride(), x.dtype, x.get_device())
    return tuple(key)


def torch_hot_call(operands):
    """einsum(subscripts, *tensors) through TORCH_HOT, or MISS."""
    s, T = operands[0], _TENSOR
    if type(s) is not str or len(operands) < 2:
        return MISS
    for x in operands[1:]:
        if type(x) is not T:
            return MISS
    hot = TORCH_HOT.get(_hot_key(s, operands[1:]))
    if hot is None:
        return MISS
    ex, shape, tdt, device, dev = hot
    rt = ex.rt
    rt.make_current()
    result = ex.torch_empty(shape, dtype=tdt, device=device)
    ex([x.data_ptr() for x in operands[1:]], result.data_ptr(), rt.stream(_RAW_STREAM(dev)))
    return result


def _remember_torch(subscripts, views, ex) -> None:
    global _TENSOR, _RAW_STREAM
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # (device_arrays.torch_stream's getter)
    tensors = [v.owner for v in views]
    if raw is None or any(type(x) is not torch.Tensor for x in tensors):
        return
    dev = tensors[0].get_device()
    if dev < 0 or any(x.get_device() != dev for x in tensors):
        return
    _TENSOR, _RAW_STREAM = torch.Tensor, raw
    if len(TORCH_HOT) >= TORCH_HOT_MAX:
        TORCH_HOT.clear()
    TORCH_HOT[_hot_key(subscripts, tensors)] = (ex, tuple(ex.plan.out_shape), ex.torch_dtype, tensors[0].device, dev)


def fast_cuda_einsum(subscripts, raw, dtype, order, casting, optimize, memory_limit, strategy, cache,
                     stream=None, remember=False):
    """A repeated call on device arrays: one lookup, allocate the result, launch. A Seen
    (the views made, for cuda_einsum) otherwise. ``remember``: every option is its default,
    so a call on plain torch tensors may enter TORCH_HOT."""
    views, handle = device_views(raw, stream)
    if any(v is None for v in views):
        return Seen(views, handle)
    ex = cache.get(_fast_key(subscripts, views, dtype, order, casting, optimize, memory_limit, strategy))
    if ex is None:
        return Seen(views, handle)
    rt = ex.rt
    rt.make_current()
    mark = _order_after_producers(rt, handle, views, stream)
    lib = views[0].library
    if lib == "torch" and ex.out_order == "C":
        result = ex.torch_empty(ex.plan.out_shape, dtype=ex.torch_dtype, device=views[0].owner.device)
        ptr = result.data_ptr()
        if remember and stream is None and not mark and all(v.library == "torch" for v in views):
            _remember_torch(subscripts, views, ex)
    else:
        result, res_view = empty_like_library(views, ex.plan.out_shape, ex.plan.out_dtype, ex.out_order,
                                              None if stream is None else handle)
        ptr = res_view.ptr
    ex([v.ptr for v in views], ptr, rt.stream(handle))
    if mark:
        _mark_torch(handle, [v.owner for v in views if v.library == "torch"] + [result])
    return result


def cuda_einsum(spec, raw, out, dtype, order, casting, optimize, memory_limit, strategy, build, cache,
                stream_arg=None, seen: Seen | None = None):
    """The CUDA half of einc.einsum (``build``/``cache`` come from api.py; ``stream_arg`` is
    the caller's ``stream=``, None for the operands' current stream)."""
    from .execute_cuda import CudaExecutable
    from .runtime.cuda import runtime

    rt = runtime(0)
    rt.make_current()
    views, handle = (seen.views, seen.handle) if seen is not None else device_views(raw, stream_arg)
    on_device = [v for v in views if v is not None]
    stream = rt.stream(handle)
    uploads, hosts = [], []
    try:
        for i, x in enumerate(raw):
            if views[i] is not None:
                continue
            from .api import _operand, _validate
            a = _validate([_operand(x, i)])[0]
            if not a.flags.c_contiguous:  # (np.ascontiguousarray would turn 0-d into 1-d)
                a = a.copy(order="C")
            hosts.append(i)  # uploaded once planned: a plan refused (memory_limit) allocates nothing
            views[i] = DeviceView(0, a.shape, row_major(a.shape), a.dtype, "numpy", a)
        out_view = None
        if out is not None and is_device_array(out):
            from .runtime.streams import dlpack_stream
            out_view = view(out, -1, dlpack_stream(handle))
        key = ("cuda", rt.ordinal, spec, tuple([(v.shape, v.strides, v.dtype.char) for v in views]),
               None if out is None else (np.shape(out), out_view.strides if out_view else np.asarray(out).strides,
                                         out_view.dtype.char if out_view else np.asarray(out).dtype.char),
               dtype if dtype is None else str(dtype), order, casting,
               optimize if type(optimize) is str else repr(optimize), repr(memory_limit), strategy)
        ex = cache.get(key)
        if ex is None:
            fakes = [_fake(v.shape, v.dtype, v.strides) for v in views]
            fake_out = None
            if out is not None:
                fake_out = _fake(out_view.shape, out_view.dtype, out_view.strides) if out_view else out
            plan = build(spec, fakes, fake_out, dtype, order, casting, optimize, memory_limit, strategy,
                         compile=False, backend="cuda")
            ex = CudaExecutable(plan, rt)
            ex.out_order = "F" if is_fortran(plan.out_shape, plan.out_strides) else "C"
            if on_device and on_device[0].library == "torch":
                import torch
                from .runtime.device_arrays import torch_dtype
                ex.torch_empty, ex.torch_dtype = torch.empty, torch_dtype(plan.out_dtype)
            cache.put(key, ex)
            if out is None and spec.text is not None and len(on_device) == len(views):
                cache.put(_fast_key(spec.text, views, dtype, order, casting, optimize, memory_limit,
                                    strategy), ex)
        for i in hosts:
            a = views[i].owner
            views[i].ptr = p = rt.alloc(a.nbytes, stream)
            uploads.append(p)
            rt.upload(p, a, stream)
        plan = ex.plan
        host_out = None
        if out_view is not None:
            res_view, result = out_view, out
        elif out is not None or not on_device:  # a numpy result, through a device buffer
            if out is not None:
                host_out, shape = out, out.shape
                strides, dt = tuple(s // out.itemsize for s in out.strides), out.dtype
            else:
                host_out = np.empty(plan.out_shape, dtype=plan.out_dtype, order=ex.out_order)
                strides = tuple(s // host_out.itemsize for s in host_out.strides)
                shape, dt = plan.out_shape, plan.out_dtype
            if any(s < 0 for s in strides) or not (host_out.flags.c_contiguous or host_out.flags.f_contiguous):
                raise EincValueError("out= for the CUDA backend must be contiguous when it is a numpy array")
            p = rt.alloc(host_out.nbytes, stream)
            uploads.append(p)
            res_view, result = DeviceView(p, shape, strides, dt, "numpy", host_out), host_out
        else:
            result, res_view = empty_like_library(on_device, plan.out_shape, plan.out_dtype,
                                                  ex.out_order, None if stream_arg is None else handle)
        if out is not None:
            if tuple(res_view.shape) != tuple(plan.out_shape):
                raise EincShapeError(f"out has shape {tuple(res_view.shape)} but the result has shape {plan.out_shape}")
            lo, hi = _span(res_view)
            for i, v in enumerate(views):
                a, b = _span(v)
                if a < hi and lo < b and v.library != "numpy":
                    raise EincValueError(f"out overlaps operand {i}; pass a separate output array")
        mark = _order_after_producers(rt, handle, views + [out_view], stream_arg)
        ex([v.ptr for v in views], res_view.ptr, stream)
        if mark:
            _mark_torch(handle, [v.owner for v in views + [res_view] if v is not None and v.library == "torch"])
        if host_out is not None:
            rt.download(host_out, res_view.ptr, stream)
            try:
                rt.synchronize(stream, "the CUDA stream")
            except Exception as e:
                steps = "; ".join(l.label for l, _ in ex.launchers)
                hint = " (EINC_CUDA_SYNC=1 names the step that faulted)" if len(ex.launchers) > 1 else ""
                raise type(e)(f"{e} while running {steps}{hint}") from e
    finally:
        for p in uploads:
            rt.free(p, stream)
    if host_out is not None and out is None and host_out.ndim == 0:
        return host_out[()]
    return result
