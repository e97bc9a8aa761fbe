"""Backend-neutral label logic for einsum gradients (used by einc.jax and einc.torch).

An einsum's vector-Jacobian product for operand ``i`` is another einsum: the output
cotangent contracted with the other operands, producing the labels operand ``i`` shares
with them. What a framework then does with that result is fixed by the labels alone:
reshape (size 1 where the operand broadcast a label, which the einsum summed), broadcast
over labels private to the operand, and scatter into the diagonal where the operand
repeats a label. ``grad_spec`` computes all of it from shapes, with no arrays.

>>> axes, out, sizes = labels("ij,jk->ik", [(2, 3), (3, 4)])
>>> g = grad_spec(0, axes, out, sizes, (2, 3))
>>> g.equation, g.others, g.shape
('ab,cb->ac', (1,), (2, 3))
"""
from __future__ import annotations

import string
from dataclasses import dataclass

from .bind import expand_term
from .errors import EincShapeError, EincValueError
from .ir import EllipsisDim
from .parse import parse

__all__ = ["labels", "result_shape", "letters", "grad_spec", "GradSpec", "batched_equation"]


def labels(equation: str, shapes):
    """(per-operand labels, output labels, label -> size) with ellipses expanded.

    >>> labels("i...,i->...", [(2, 5), (2,)])[2]
    {'i': 2, …0: 5}
    """
    spec = parse(equation)
    if len(spec.inputs) != len(shapes):
        raise EincValueError(f"the subscripts name {len(spec.inputs)} operand(s) but {len(shapes)} were given")
    axes = [expand_term(t, len(s), i, spec) for i, (t, s) in enumerate(zip(spec.inputs, shapes))]
    sizes: dict = {}
    for i, (ls, s) in enumerate(zip(axes, shapes)):
        for l, n in zip(ls, s):
            if sizes.get(l, 1) == 1:
                sizes[l] = n
            elif n not in (1, sizes[l]):
                raise EincShapeError(f"label {l!r} has sizes {sizes[l]} and {n} (operand {i})")
    ell = max((sum(isinstance(x, EllipsisDim) for x in ax) for ax in axes), default=0)
    out = []
    for x in spec.output:
        out.extend(EllipsisDim(ell - 1 - j) for j in range(ell)) if x is Ellipsis else out.append(x)
    return axes, tuple(out), sizes


def result_shape(equation: str, shapes) -> tuple:
    """The einsum's output shape, by einc's own rules (numpy's, plus ``i...->i``).

    >>> result_shape("bij,bjk->bik", [(7, 2, 3), (1, 3, 4)])
    (7, 2, 4)
    """
    axes, out, sizes = labels(equation, shapes)
    return tuple(sizes[l] for l in out)


def letters(*label_lists) -> dict:
    """Each distinct label (in first-seen order) -> a letter; at most 52 labels.

    >>> letters(("x", "y"), ("y", "z"))
    {'x': 'a', 'y': 'b', 'z': 'c'}
    """
    names: dict = {}
    for ls in label_lists:
        for l in ls:
            names.setdefault(l, None)
    if len(names) > len(string.ascii_letters):
        raise EincValueError(f"einc gradients handle at most 52 distinct labels, got {len(names)}")
    return dict(zip(names, string.ascii_letters))


@dataclass(frozen=True)
class GradSpec:
    """How to build d(sum(cotangent * out)) / d operand from one einsum.

    ``equation`` takes (cotangent, *operands[others]); its result is reshaped to
    ``reshaped``, broadcast to ``broadcast`` (one axis per distinct label of the operand),
    then, when ``diagonal`` is set, written into the diagonal of a zero array of
    ``shape``: ``diagonal[p]`` is the broadcast axis that operand axis ``p`` reads.
    """
    equation: str
    others: tuple
    reshaped: tuple
    broadcast: tuple
    shape: tuple
    diagonal: tuple | None


def grad_spec(i: int, axes, out, sizes, shape) -> GradSpec:
    """The GradSpec of operand ``i`` (of ``shape``), from ``labels``'s result.

    >>> axes, out, sizes = labels("ii,j->ij", [(3, 3), (1,)])
    >>> g = grad_spec(0, axes, out, sizes, (3, 3))
    >>> g.equation, g.diagonal
    ('ab,b->a', (0, 0))
    >>> grad_spec(1, axes, out, sizes, (1,)).reshaped   # broadcast: summed, kept as size 1
    (1,)
    """
    mine = axes[i]
    uniq = list(dict.fromkeys(mine))
    elsewhere = set(out).union(*(set(a) for j, a in enumerate(axes) if j != i))
    own = dict(zip(mine, shape))
    # labels the gradient einsum produces: shared with the output or other operands, and
    # not broadcast (size 1 here while larger elsewhere: those are summed)
    keep = [l for l in uniq if l in elsewhere and not (own[l] == 1 and sizes[l] != 1)]
    others = tuple(j for j in range(len(axes)) if j != i)
    names = letters(out, *[axes[j] for j in others], keep)
    eq = ",".join("".join(names[l] for l in ls) for ls in [out] + [axes[j] for j in others]) + \
        "->" + "".join(names[l] for l in keep)
    diagonal = None if len(uniq) == len(mine) else tuple(uniq.index(l) for l in mine)
    return GradSpec(eq, others, tuple(sizes[l] if l in keep else 1 for l in uniq),
                    tuple(own[l] for l in uniq), tuple(shape), diagonal)


def batched_equation(equation: str, shapes, extra: int) -> str:
    """``equation`` for operands that each carry ``extra`` more leading axes (sizes 1 or
    B, as ``vmap_method="expand_dims"`` passes them): a letter equation whose output
    leads with those axes.

    >>> batched_equation("ij,jk->ik", [(5, 2, 3), (1, 3, 4)], 1)
    'abc,acd->abd'
    """
    axes, out, _ = labels(equation, [s[extra:] for s in shapes])
    batch = tuple(("einc-batch", j) for j in range(extra))
    names = letters(batch, *axes, out)
    term = lambda ls: "".join(names[l] for l in ls)
    return ",".join(term(batch + tuple(a)) for a in axes) + "->" + term(batch + tuple(out))

