"""einc inside JAX: ``einc.jax.einsum``, usable under ``jax.jit``, ``jax.grad`` and ``jax.vmap``.

>>> import jax, jax.numpy as jnp, einc.jax
>>> a, b = jnp.ones((3, 4)), jnp.ones((4, 5))
>>> c = jax.jit(lambda a, b: einc.jax.einsum("ij,jk->ik", a, b))(a, b)   # einc's kernel
>>> float(c[0, 0])
4.0
>>> ga = jax.grad(lambda a: einc.jax.einsum("ij,jk->", a, b))(a)         # backward: einc too
>>> float(ga[0, 0])
5.0

Operands are first promoted to one dtype with JAX's rules (as ``jnp.einsum`` does); the
einsum itself is a ``jax.custom_vjp`` whose forward runs on einc and whose backward is
einc einsums again (the output cotangent contracted with the other operands, summed over
dimensions the operand broadcast, broadcast over labels private to it, written into the
diagonal for a repeated label; see einc.autodiff), so higher derivatives work too. JAX's
complex convention applies: the VJP is the transpose, not the conjugate transpose, exactly
as ``jnp.einsum``'s (``jax.grad`` of a real function of complex inputs then gives the
conjugate of PyTorch's gradient, as JAX documents).

Where it runs is chosen when XLA lowers the call (``jax.lax.platform_dependent``):

- **CUDA**: an XLA FFI custom call (einc/jax_ffi.c) that launches einc's own NVRTC
  kernels on XLA's stream, on XLA's device buffers;
- **CPU** (and any other platform): ``jax.pure_callback`` into einc's llvmlite backend,
  or, with ``cpu="ffi"``, the same FFI shim registered for the host platform, which
  writes into XLA's output buffer directly.

The output shape and dtype come from einc's own rules, so each new operand shape is a new
trace, a new einc plan, and a cached one afterwards. Under ``jax.vmap`` the call receives
its batch axes in front (``vmap_method="expand_dims"``) and einc contracts them as one
more broadcast label.
"""
from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import api
from .autodiff import batched_equation, grad_spec, labels, result_shape
from .errors import EincSpecError

__all__ = ["einsum"]

CPU_PATHS = ("callback", "ffi")


def einsum(equation: str, *operands, cpu: str = "callback"):
    """``jnp.einsum(equation, *operands)``, computed by einc (differentiable, jittable).

    ``cpu`` picks how a CPU computation reaches einc: ``"callback"`` (``jax.pure_callback``)
    or ``"ffi"`` (einc's XLA FFI target for the host). CUDA always uses the FFI target.

    >>> import jax.numpy as jnp, einc.jax
    >>> float(einc.jax.einsum("ii->", jnp.eye(3)))
    3.0
    """
    if cpu not in CPU_PATHS:
        raise ValueError(f"cpu={cpu!r}: use one of {', '.join(CPU_PATHS)}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise EincSpecError("einsum needs at least one operand")
    ops = [jnp.asarray(x) for x in operands]
    dt = jnp.result_type(*ops)
    return _einsum(equation, cpu, *[x.astype(dt) for x in ops])


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _einsum(equation, cpu, *ops):
    return _forward(equation, cpu, ops)


def _fwd(equation, cpu, *ops):
    return _einsum(equation, cpu, *ops), ops  # (through the custom_vjp again: higher orders)


def _bwd(equation, cpu, ops, g):
    axes, out, sizes = labels(equation, [x.shape for x in ops])
    return tuple(_grad(i, g, ops, axes, out, sizes, cpu) if jnp.issubdtype(x.dtype, jnp.inexact) else None
                 for i, x in enumerate(ops))


_einsum.defvjp(_fwd, _bwd)


def _grad(i, g, ops, axes, out, sizes, cpu):
    spec = grad_spec(i, axes, out, sizes, ops[i].shape)
    r = _einsum(spec.equation, cpu, g, *[ops[j] for j in spec.others])
    r = jnp.broadcast_to(r.reshape(spec.reshaped), spec.broadcast).astype(ops[i].dtype)
    if spec.diagonal is None:
        return r
    # a repeated label: the gradient lives on the diagonal of a zero array
    idx = []
    for u in spec.diagonal:
        shape = [1] * len(spec.broadcast)
        shape[u] = spec.broadcast[u]
        idx.append(jnp.arange(spec.broadcast[u]).reshape(shape))
    return jnp.zeros(spec.shape, r.dtype).at[tuple(idx)].set(r)


# ----------------------------------------------------------------------------------------
# the forward: one einc call, placed per platform when XLA lowers it

def _forward(equation, cpu, ops):
    shapes = [tuple(x.shape) for x in ops]
    dt = np.result_type(*[np.dtype(x.dtype) for x in ops])
    result = jax.ShapeDtypeStruct(result_shape(equation, shapes), dt)
    ranks = tuple(len(s) for s in shapes)
    host = functools.partial(_ffi if cpu == "ffi" else _callback, "cpu", equation, ranks, result)
    if not _cuda_present():
        return host(*ops)
    return jax.lax.platform_dependent(*ops, cuda=functools.partial(_cuda, equation, ranks, result),
                                      default=host)


def _callback(platform, equation, ranks, result, *ops):
    def run(*arrays):
        arrays = [np.asarray(a) for a in arrays]
        eq = equation
        extra = arrays[0].ndim - ranks[0] if ranks else 0
        if extra:  # under vmap: batch axes in front of every operand
            eq = batched_equation(equation, [a.shape for a in arrays], extra)
        return np.asarray(api.einsum(eq, *arrays, backend="cpu"), dtype=result.dtype)
    return jax.pure_callback(run, result, *ops, vmap_method="expand_dims")


def _ffi(platform, equation, ranks, result, *ops):
    from . import jax_ffi
    name = jax_ffi.target(platform)
    call = jax.ffi.ffi_call(name, result, vmap_method="expand_dims")
    return call(*ops, key=np.int64(jax_ffi.key(equation, ranks)))


def _cuda(equation, ranks, result, *ops):
    if _cuda_ffi_ready():
        return _ffi("cuda", equation, ranks, result, *ops)
    return _callback("cuda", equation, ranks, result, *ops)  # host copies, but correct


@functools.cache
def _cuda_present() -> bool:
    try:
        return bool(jax.devices("cuda"))
    except RuntimeError:
        return False


@functools.cache
def _cuda_ffi_ready() -> bool:
    try:
        from . import jax_ffi
        from .runtime.cuda import available
        if not available():
            raise RuntimeError("cuda-python finds no usable CUDA device (pip install 'einc[cuda]')")
        jax_ffi.target("cuda")
        return True
    except Exception as e:  # noqa: BLE001 - fall back, loudly
        warnings.warn(f"einc.jax: no CUDA FFI target ({type(e).__name__}: {e}); CUDA calls go "
                      f"through jax.pure_callback (host copies)", RuntimeWarning, stacklevel=3)
        return False
