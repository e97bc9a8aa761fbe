"""bind: a Spec plus concrete operands -> a Bound of strided layouts, with no copies.

Every einsum special case becomes plain strides here, so no later stage tests for it:
- a label repeated in one operand (``ii->i``) is one mode whose stride is the sum of the
  repeated strides (a diagonal view);
- broadcasting (a size-1 axis against size n, for ellipsis dimensions and for named
  labels alike, as numpy does) is stride 0;
- an ellipsis becomes fresh ``EllipsisDim`` labels aligned from the right;
- transposed, sliced or negative-stride inputs keep their own strides.
"""
from __future__ import annotations

import numpy as np

from .errors import EincShapeError, EincSpecError
from .ir import Bound, EllipsisDim, Layout, Spec


def _show(label) -> str:
    return "..." if isinstance(label, EllipsisDim) else repr(label)


def expand_term(term, ndim: int, operand: int, spec: Spec) -> tuple:
    """The term's label for each axis of an operand with ``ndim`` axes."""
    named = [x for x in term if x is not Ellipsis]
    text = _term_text(term)
    if Ellipsis not in term:
        if len(named) != ndim:
            raise EincShapeError(
                f"operand {operand} has {ndim} dimension(s) but its subscripts '{text}' "
                f"name {len(named)}" + (" (use '...' to broadcast over extra dimensions)" if ndim > len(named) else ""))
        return tuple(term)
    covered = ndim - len(named)
    if covered < 0:
        raise EincShapeError(f"operand {operand} has {ndim} dimension(s) but its subscripts "
                             f"'{text}' name {len(named)} besides the ellipsis")
    pos = term.index(Ellipsis)
    dims = tuple(EllipsisDim(covered - 1 - j) for j in range(covered))
    return tuple(term[:pos]) + dims + tuple(term[pos + 1:])


def _term_text(term) -> str:
    parts = ["..." if x is Ellipsis else str(x) for x in term]
    return ("" if all(len(p) == 1 or p == "..." for p in parts) else " ").join(parts)


def bind(spec: Spec, arrays) -> Bound:
    """Fold diagonals, broadcasting and ellipses of ``arrays`` into layouts.

    >>> import numpy as np
    >>> from einc.parse import parse
    >>> b = bind(parse("ii->i"), [np.zeros((3, 3))])
    >>> b.inputs[0].strides
    (4,)
    """
    if len(arrays) != len(spec.inputs):
        raise EincSpecError(f"the subscripts name {len(spec.inputs)} operand(s) but "
                            f"{len(arrays)} were given")
    axes = [expand_term(t, a.ndim, i, spec) for i, (t, a) in enumerate(zip(spec.inputs, arrays))]

    sizes: dict = {}  # label -> (size, operand) of the first non-1 size seen
    for i, (labels, a) in enumerate(zip(axes, arrays)):
        seen: dict = {}
        for label, n in zip(labels, a.shape):
            if label in seen and seen[label] != n:
                raise EincShapeError(f"operand {i} repeats label {_show(label)} on axes of "
                                     f"different sizes ({seen[label]} != {n})")
            seen[label] = n
        for label, n in seen.items():
            prev = sizes.get(label)
            if prev is None or prev[0] == 1:
                sizes[label] = (n, i)
            elif n != 1 and n != prev[0]:
                what = "ellipsis dimension" if isinstance(label, EllipsisDim) else "label"
                raise EincShapeError(f"{what} {_show(label)} has size {prev[0]} in operand "
                                     f"{prev[1]} but size {n} in operand {i}; sizes must match "
                                     "or be 1 (broadcast)")

    layouts = []
    for labels, a in zip(axes, arrays):
        item = a.itemsize
        stride_of: dict = {}
        for label, n, s in zip(labels, a.shape, a.strides):
            full = sizes[label][0]
            step = 0 if (n == 1 and full != 1) else s // item
            stride_of[label] = stride_of.get(label, 0) + step
        layouts.append(Layout(tuple(stride_of), tuple(sizes[l][0] for l in stride_of),
                              tuple(stride_of.values())))

    ell = max((sum(isinstance(x, EllipsisDim) for x in ax) for ax in axes), default=0)
    out = []
    for x in spec.output:
        if x is Ellipsis:
            out.extend(EllipsisDim(ell - 1 - j) for j in range(ell))
        else:
            out.append(x)
    extents = tuple((label, n) for label, (n, _) in sizes.items())
    return Bound(spec, tuple(layouts), tuple(a.dtype for a in arrays), tuple(out), extents)
