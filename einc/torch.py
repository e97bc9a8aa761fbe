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

import string

import numpy as np
import torch

from . import api
from .bind import expand_term
from .errors import EincShapeError, EincValueError
from .ir import EllipsisDim
from .parse import parse

__all__ = ["einsum"]


def einsum(equation: str, *operands: torch.Tensor) -> torch.Tensor:
    """``torch.einsum``'s signature, computed by einc (``torch.ops.einc.einsum``).

    >>> import torch, einc.torch
    >>> einc.torch.einsum("ii->", torch.eye(3)).item()
    3.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return torch.ops.einc.einsum(equation, list(operands))


# ----------------------------------------------------------------------------------------
# the op

def _aliases(out: torch.Tensor, inputs) -> bool:
    p = out.untyped_storage().data_ptr()
    return any(t.untyped_storage().data_ptr() == p for t in inputs if t.numel())


@torch.library.custom_op("einc::einsum", mutates_args=())
def _einsum_op(equation: str, operands: list[torch.Tensor]) -> torch.Tensor:
    if operands and all(t.is_cuda for t in operands):
        if torch.cuda.is_available():  # autograd runs backward on its own thread: bind the context
            torch.cuda.set_device(operands[0].device)
        out = api.einsum(equation, *operands, backend="cuda")
    elif any(t.is_cuda for t in operands):
        raise EincValueError("einc.torch.einsum: operands must all be on the CPU or all on CUDA")
    else:
        host = [t.detach().resolve_conj().resolve_neg().numpy() for t in operands]
        r = np.asarray(api.einsum(equation, *host, backend="cpu"))
        if not r.flags.writeable or any(np.shares_memory(r, h) for h in host):
            r = r.copy()  # a relabelling came back as a view of an input
        out = torch.from_numpy(r)
    if not isinstance(out, torch.Tensor):
        out = torch.as_tensor(out)
    if _aliases(out, operands):  # a relabelling came back as a view: an op's output may not alias
        out = out.clone()
    return out


@_einsum_op.register_fake
def _einsum_fake(equation, operands):
    shape, dtype = _result(equation, [tuple(int(s) for s in t.shape) for t in operands],
                           [t.dtype for t in operands])
    return operands[0].new_empty(shape, dtype=dtype) if operands else torch.empty(shape, dtype=dtype)


_DTYPES = {torch.bool: "bool", torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16",
           torch.int32: "int32", torch.int64: "int64", torch.float16: "float16", torch.float32: "float32",
           torch.float64: "float64", torch.complex64: "complex64", torch.complex128: "complex128"}
_TORCH = {v: k for k, v in _DTYPES.items()}


def _np_dtype(tdt: torch.dtype) -> np.dtype:  # (no tensors: this runs under fake modes too)
    if tdt == torch.bfloat16:
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    if tdt not in _DTYPES:
        raise EincValueError(f"einc.torch.einsum: torch dtype {tdt} is not supported")
    return np.dtype(_DTYPES[tdt])


def _torch_dtype(dt: np.dtype) -> torch.dtype:
    return torch.bfloat16 if dt.name == "bfloat16" else _TORCH[dt.name]


def _labels(equation: str, shapes):
    """(per-operand labels, output labels, label -> size) with ellipses expanded."""
    spec = parse(equation)
    if len(spec.inputs) != len(shapes):
        raise EincValueError(f"the subscripts name {len(spec.inputs)} operand(s) but {len(shapes)} were given")
    axes = [expand_term(t, len(s), i, spec) for i, (t, s) in enumerate(zip(spec.inputs, shapes))]
    sizes: dict = {}
    for labels, s in zip(axes, shapes):
        for l, n in zip(labels, s):
            if sizes.get(l, 1) == 1:
                sizes[l] = n
            elif n not in (1, sizes[l]):
                raise EincShapeError(f"label {l!r} has sizes {sizes[l]} and {n}")
    ell = max((sum(isinstance(x, EllipsisDim) for x in ax) for ax in axes), default=0)
    out = []
    for x in spec.output:
        out.extend(EllipsisDim(ell - 1 - j) for j in range(ell)) if x is Ellipsis else out.append(x)
    return axes, tuple(out), sizes


def _result(equation, shapes, dtypes):
    axes, out, sizes = _labels(equation, shapes)
    dt = np.result_type(*[_np_dtype(d) for d in dtypes]) if dtypes else np.dtype(np.float64)
    return tuple(sizes[l] for l in out), _torch_dtype(dt)


# ----------------------------------------------------------------------------------------
# autograd

def _setup(ctx, inputs, output):
    equation, operands = inputs
    ctx.equation = equation
    ctx.save_for_backward(*operands)


def _letters(*label_lists):
    names = {}
    for labels in label_lists:
        for l in labels:
            names.setdefault(l, None)
    if len(names) > len(string.ascii_letters):
        raise EincValueError(f"einc.torch backward handles at most 52 distinct labels, got {len(names)}")
    return dict(zip(names, string.ascii_letters))


def _grad_operand(i, grad, operands, axes, out, sizes):
    """d(sum grad * out) / d operands[i], as einc einsums."""
    mine = axes[i]
    uniq = list(dict.fromkeys(mine))
    elsewhere = set(out).union(*(set(a) for j, a in enumerate(axes) if j != i))
    shape_i = dict(zip(mine, operands[i].shape))
    # labels the gradient einsum produces: shared with the output or other operands, and not
    # broadcast (size 1) in this operand while larger elsewhere (those are summed)
    keep = [l for l in uniq if l in elsewhere and not (shape_i[l] == 1 and sizes[l] != 1)]
    conj = (lambda t: t.conj()) if grad.is_complex() else (lambda t: t)
    others = [(conj(o), a) for j, (o, a) in enumerate(zip(operands, axes)) if j != i]
    names = _letters(out, *[a for _, a in others], keep)
    eq = ",".join("".join(names[l] for l in ls) for ls in [out] + [a for _, a in others]) + \
        "->" + "".join(names[l] for l in keep)
    g = torch.ops.einc.einsum(eq, [grad] + [o for o, _ in others])
    # unique-label layout: keep's axes in place, size 1 elsewhere, expanded over private labels
    g = g.reshape([sizes[l] if l in keep else 1 for l in uniq])
    g = g.expand([shape_i[l] for l in uniq])
    if operands[i].is_complex() is False and g.is_complex():
        g = g.real
    g = g.to(operands[i].dtype)
    if len(uniq) == len(mine):
        return g.contiguous()
    # a repeated label: the gradient lives on the diagonal of a zero tensor
    full = torch.zeros(operands[i].shape, dtype=g.dtype, device=g.device)
    strides = [sum(st for l2, st in zip(mine, full.stride()) if l2 == l) for l in uniq]
    full.as_strided([shape_i[l] for l in uniq], strides).copy_(g)
    return full


def _backward(ctx, grad):
    operands = list(ctx.saved_tensors)
    axes, out, sizes = _labels(ctx.equation, [tuple(t.shape) for t in operands])
    differentiable = lambda t: t.is_floating_point() or t.is_complex()
    grads = [_grad_operand(i, grad, operands, axes, out, sizes) if differentiable(operands[i]) else None
             for i in range(len(operands))]
    return None, grads


_einsum_op.register_autograd(_backward, setup_context=_setup)
