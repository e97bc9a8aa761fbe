"""einc inside PyTorch: ``torch.ops.einc.einsum``, a custom op with a fake kernel and autograd.

>>> import torch, einc.torch
>>> a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
>>> b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
>>> c = einc.torch.einsum("ij,jk->ik", a, b)          # einc's kernel, CPU (llvmlite) here
>>> c.sum().backward()                                  # backward: two more einc einsums
>>> bool(torch.allclose(a.grad, torch.ones(3, 5, dtype=torch.float64) @ b.T))
True

The forward runs einc's CPU backend on CPU tensors (through numpy views, no copies) and
its CUDA backend on CUDA tensors (in place, on torch's current stream). The op is
registered with ``torch.library.custom_op``, so ``torch.compile(fullgraph=True)`` traces
through it (``register_fake`` gives the output's shape and dtype), and
``register_autograd`` makes its backward einc einsums too: the output gradient contracted
with the other operands (conjugated, for complex), summed over broadcast dimensions,
broadcast over labels private to the operand, and scattered back into the diagonal of an
operand with a repeated label. The backward calls the same op, so higher derivatives work.
Backward equations use letters, so at most 52 distinct labels take gradients.
"""
from __future__ import annotations

import numpy as np
import torch

from . import api, autodiff
from .errors import EincTypeError, EincValueError
from .runtime.device_arrays import _np_of_torch, torch_dtype

__all__ = ["einsum"]


def einsum(equation: str, *operands: torch.Tensor, stream=None) -> torch.Tensor:
    """``torch.einsum``'s signature, computed by einc (``torch.ops.einc.einsum``).

    CUDA tensors are contracted on torch's current stream, as torch's own ops are.
    ``stream=`` (a ``torch.cuda.Stream``) runs it on that stream instead, after the work
    queued on the current stream (as einc.einsum's ``stream=``); the result is ready on it.

    >>> import torch, einc.torch
    >>> einc.torch.einsum("ii->", torch.eye(3)).item()
    3.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if stream is not None:
        if not isinstance(stream, torch.cuda.Stream):
            raise EincTypeError(f"einc.torch.einsum: stream= must be a torch.cuda.Stream, "
                                f"not {type(stream).__name__}")
        stream.wait_stream(torch.cuda.current_stream(stream.device))
        with torch.cuda.stream(stream):
            out = torch.ops.einc.einsum(equation, list(operands))
        for t in operands:  # their memory stays theirs until the stream's work is done
            if t.is_cuda:
                t.record_stream(stream)
        return out
    return torch.ops.einc.einsum(equation, list(operands))


# ----------------------------------------------------------------------------------------
# the op

def _aliases(out: torch.Tensor, inputs) -> bool:
    p = out.untyped_storage().data_ptr()
    return any(t.untyped_storage().data_ptr() == p for t in inputs if t.numel())


@torch.library.custom_op("einc::einsum", mutates_args=())
def _einsum_op(equation: str, operands: list[torch.Tensor]) -> torch.Tensor:
    cuda = [t.is_cuda for t in operands]
    if operands and all(cuda):
        idx = operands[0].device.index or 0
        if torch._C._cuda_getDevice() != idx:  # autograd runs backward on its own thread
            torch.cuda.set_device(idx)
        out = api.einsum(equation, *operands, backend="cuda")
        if not isinstance(out, torch.Tensor):
            out = torch.as_tensor(out)
        if _aliases(out, operands):  # a relabelling came back as a view: an op's output may not alias
            out = out.clone()
        return out
    if any(cuda):
        raise EincValueError("einc.torch.einsum: operands must all be on the CPU or all on CUDA")
    host = [(t.resolve_conj().resolve_neg() if t.is_conj() or t.is_neg() else t).detach().numpy()
            for t in operands]
    r = np.asarray(api.einsum(equation, *host, backend="cpu"))
    if not r.flags.writeable or any(np.may_share_memory(r, h) for h in host):
        r = r.copy()  # a relabelling came back as a view of an input (bounds overlap: copy)
    return torch.from_numpy(r)


@_einsum_op.register_fake
def _einsum_fake(equation, operands):
    shape, dtype = _result(equation, [tuple(int(s) for s in t.shape) for t in operands],
                           [t.dtype for t in operands])
    return operands[0].new_empty(shape, dtype=dtype) if operands else torch.empty(shape, dtype=dtype)


def _result(equation, shapes, dtypes):
    # (dtype names only, no tensors: this runs under fake modes too)
    dt = np.result_type(*[_np_of_torch(d, i) for i, d in enumerate(dtypes)]) if dtypes else np.dtype(np.float64)
    return autodiff.result_shape(equation, shapes), torch_dtype(dt)


# ----------------------------------------------------------------------------------------
# autograd

def _setup(ctx, inputs, output):
    equation, operands = inputs
    ctx.equation = equation
    ctx.save_for_backward(*operands)


def _grad_operand(i, grad, operands, axes, out, sizes):
    """d(sum grad * out) / d operands[i], as einc einsums (einc.autodiff's GradSpec)."""
    g_spec = autodiff.grad_spec(i, axes, out, sizes, tuple(operands[i].shape))
    conj = (lambda t: t.conj()) if grad.is_complex() else (lambda t: t)  # torch's convention
    g = torch.ops.einc.einsum(g_spec.equation, [grad] + [conj(operands[j]) for j in g_spec.others])
    g = g.reshape(g_spec.reshaped).expand(g_spec.broadcast)
    if not operands[i].is_complex() and g.is_complex():
        g = g.real
    g = g.to(operands[i].dtype)
    if g_spec.diagonal is None:
        return g.contiguous()
    # a repeated label: the gradient lives on the diagonal of a zero tensor
    full = torch.zeros(g_spec.shape, dtype=g.dtype, device=g.device)
    strides = [0] * len(g_spec.broadcast)
    for axis, k in enumerate(g_spec.diagonal):
        strides[k] += full.stride(axis)
    full.as_strided(g_spec.broadcast, strides).copy_(g)
    return full


def _backward(ctx, grad):
    operands = list(ctx.saved_tensors)
    axes, out, sizes = autodiff.labels(ctx.equation, [tuple(t.shape) for t in operands])
    differentiable = lambda t: t.is_floating_point() or t.is_complex()
    grads = [_grad_operand(i, grad, operands, axes, out, sizes) if differentiable(operands[i]) else None
             for i in range(len(operands))]
    return None, grads


_einsum_op.register_autograd(_backward, setup_context=_setup)
