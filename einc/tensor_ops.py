"""``tensordot`` and ``transpose`` with numpy's signatures, computed by ``einc.einsum``.

They make the ``einc`` module a backend for array libraries that dispatch by module name:
``opt_einsum.contract(..., backend="einc")`` imports ``einc`` and calls its ``einsum``,
``tensordot`` and ``transpose``; cotengra takes ``implementation=(einc.einsum,
einc.tensordot)``. Each call is rewritten as an einsum string (one letter per axis), so it
goes through einc's plan, kernels and caches like any other einsum — numpy computes nothing
here. A transpose is a pure relabelling, which einsum returns as a view, as numpy does.
"""
from __future__ import annotations

import functools
import operator
import re

import numpy as np

from .errors import EincShapeError, EincTypeError, EincValueError

_LETTER = re.compile(r"[^\W\d_]")


_ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@functools.lru_cache(maxsize=1)
def _alphabet() -> str:
    """ascii letters first (so small calls read like numpy's), then other scripts' letters."""
    more = (chr(c) for c in range(0xC0, 0x3000))
    return _ASCII + "".join(c for c in more if c.isalpha() and _LETTER.fullmatch(c))


def _letters(n: int) -> str:
    """``n`` distinct characters that einc's letter form reads as one label each."""
    return _ASCII[:n] if n <= len(_ASCII) else _alphabet()[:n]


def _ndim(x, name) -> int:
    try:
        return len(x.shape)
    except (AttributeError, TypeError):
        raise EincTypeError(f"{name} must be an array (something with a shape), "
                            f"got {type(x).__name__}") from None


def _as_array(x):
    return x if hasattr(x, "shape") and hasattr(x, "dtype") else np.asarray(x)


def _axis(ax, ndim: int, what: str) -> int:
    try:
        ax = operator.index(ax)
    except TypeError:
        raise EincTypeError(f"{what}: axis {ax!r} is not an integer") from None
    if not -ndim <= ax < ndim:
        raise EincValueError(f"{what}: axis {ax} is out of range for an array of {ndim} dimensions")
    return ax % ndim


def _axes_list(axes, ndim: int, what: str) -> list:
    """One tensordot side: an int or a sequence of ints, normalised, no repeats."""
    seq = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    out = [_axis(ax, ndim, what) for ax in seq]
    if len(set(out)) != len(out):
        raise EincValueError(f"{what}: repeated axis in {tuple(seq)}")
    return out


def _tensordot_axes(axes, nda: int, ndb: int):
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(nda, ndb):
            raise EincValueError(f"tensordot axes={n}: give a count between 0 and {min(nda, ndb)} "
                                 f"(the operands have {nda} and {ndb} dimensions)")
        return list(range(nda - n, nda)), list(range(n))
    try:
        left, right = axes
    except (TypeError, ValueError):
        raise EincValueError(f"tensordot axes={axes!r}: give an int or a pair "
                             "(axes of a, axes of b)") from None
    la = _axes_list(left, nda, "tensordot axes of a")
    lb = _axes_list(right, ndb, "tensordot axes of b")
    if len(la) != len(lb):
        raise EincShapeError(f"tensordot axes={axes!r}: {len(la)} axes of a against {len(lb)} of b")
    return la, lb


def tensordot(a, b, axes=2, *, stream=None):
    """numpy.tensordot's answer, computed by einc.einsum (``stream=`` as einc.einsum's).

    ``axes`` is numpy's: an int ``N`` (the last N axes of ``a`` against the first N of
    ``b``) or a pair ``(axes_a, axes_b)`` of ints or sequences of ints, negative counting
    from the end. The result has ``a``'s free axes, then ``b``'s, as numpy's does.

    >>> import numpy as np, einc
    >>> a, b = np.arange(24.0).reshape(2, 3, 4), np.ones((4, 3))
    >>> np.array_equal(einc.tensordot(a, b, axes=([1, 2], [1, 0])), np.tensordot(a, b, ([1, 2], [1, 0])))
    True
    """
    from .api import einsum
    a, b = _as_array(a), _as_array(b)
    nda, ndb = _ndim(a, "tensordot's a"), _ndim(b, "tensordot's b")
    la, lb = _tensordot_axes(axes, nda, ndb)
    for i, j in zip(la, lb):
        if a.shape[i] != b.shape[j]:
            raise EincShapeError(f"tensordot: axis {i} of a has size {a.shape[i]} but axis {j} "
                                 f"of b has size {b.shape[j]}")
    letters = _letters(nda + ndb)
    ta = list(letters[:nda])
    tb = list(letters[nda:nda + ndb])
    for i, j in zip(la, lb):
        tb[j] = ta[i]  # a contracted pair shares one label
    free = [ta[i] for i in range(nda) if i not in la] + [tb[j] for j in range(ndb) if j not in lb]
    r = einsum(f"{''.join(ta)},{''.join(tb)}->{''.join(free)}", a, b, stream=stream)
    return np.asarray(r) if isinstance(r, np.generic) else r  # numpy gives a 0-d array


def transpose(a, axes=None):
    """numpy.transpose's answer (a view, as numpy's), computed by einc.einsum.

    ``axes=None`` reverses the axes; otherwise it is a permutation of ``range(a.ndim)``,
    negative entries counting from the end.

    >>> import numpy as np, einc
    >>> einc.transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    from .api import einsum
    a = _as_array(a)
    nd = _ndim(a, "transpose's a")
    if axes is None:
        perm = list(range(nd))[::-1]
    else:
        perm = _axes_list(axes, nd, "transpose axes")
        if len(perm) != nd:
            raise EincValueError(f"transpose axes {tuple(axes)} do not name each of the "
                                 f"{nd} axes once")
    if nd == 0:  # numpy's transpose of a 0-d array is a 0-d view (einsum's "->" is a scalar)
        return a[...]
    letters = _letters(nd)
    return einsum(f"{letters}->{''.join(letters[p] for p in perm)}", a)
