"""The IR every stage shares: frozen dataclasses, no behaviour beyond small helpers.

parse  -> Spec      labels only (no sizes)
bind   -> Bound     every operand as a Layout of distinct labels (diagonals, broadcasting,
                    ellipsis and input strides already folded into strides)
plan   -> Plan      buffers + steps; each Step is a loop nest over modes with one stride
                    per tensor per mode, a mode class and a strategy
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable

import numpy as np

Label = Hashable


@dataclass(frozen=True)
class EllipsisDim:
    """A label standing for one broadcast dimension of an ellipsis.

    ``index`` counts from the right (0 = the last dimension the ellipsis covers), which is
    how numpy aligns broadcast dimensions across operands.
    """

    index: int

    def __repr__(self):
        return f"…{self.index}"


@dataclass(frozen=True)
class Spec:
    """A parsed einsum: one label tuple per operand and the output labels.

    ``...`` (Python's Ellipsis) inside a tuple marks where an ellipsis stands.
    ``output`` is always resolved: for implicit subscripts it follows numpy's rule
    (the ellipsis first, then labels seen exactly once, sorted).
    """

    inputs: tuple[tuple[Label, ...], ...]
    output: tuple[Label, ...]
    implicit: bool = False
    text: str | None = None


@dataclass(frozen=True)
class Layout:
    """A strided view: ``T[c] = base[sum(c_i * strides_i)]``; labels are distinct."""

    labels: tuple[Label, ...]
    extents: tuple[int, ...]
    strides: tuple[int, ...]  # in elements, may be 0 (broadcast) or negative

    @property
    def size(self) -> int:
        return int(np.prod(self.extents, dtype=np.int64)) if self.extents else 1


@dataclass(frozen=True)
class Bound:
    """A Spec bound to concrete operands: shapes, strides and dtypes, no data."""

    spec: Spec
    inputs: tuple[Layout, ...]
    dtypes: tuple[np.dtype, ...]
    output: tuple[Label, ...]  # output labels with ellipsis expanded
    extents: tuple[tuple[Label, int], ...]  # every label's extent after broadcasting

    def extent(self, label) -> int:
        return dict(self.extents)[label]


@dataclass(frozen=True)
class Mode:
    """One loop of a step. ``kind`` is batch/m/n/k for binary steps, free/sum otherwise."""

    label: Label
    extent: int
    kind: str


@dataclass(frozen=True)
class Buffer:
    """A tensor a plan reads or writes: an input, an intermediate or the output."""

    role: str  # "input", "temp", "output", "alias" (another buffer seen as `dtype`), "const"
    dtype: np.dtype
    size: int  # elements (temps and consts; inputs/outputs are the caller's)
    index: int = -1  # operand position for inputs; the aliased buffer for aliases
    data: tuple = ()  # the values of a const buffer


@dataclass(frozen=True)
class Step:
    """``result = sum over sum/k modes of prod(operands)`` as one kernel launch.

    ``strides[t][j]`` is tensor t's stride along ``modes[j]``; tensor 0 is the result,
    tensors 1.. are ``operands`` in order. ``compute`` is the accumulation dtype.
    """

    operands: tuple[int, ...]
    result: int
    modes: tuple[Mode, ...]
    strides: tuple[tuple[int, ...], ...]
    strategy: str
    compute: np.dtype
    flops: int
    bytes: int
    text: str = ""  # the step as an einsum, for explain
    config: tuple = ()  # strategy-specific choices (loop order, tiles), part of the kernel key

    def option(self, key: str, default=None):
        """The value of the config's (key, value) pair, or ``default``."""
        return next((c[1] for c in self.config if isinstance(c, tuple) and len(c) == 2 and c[0] == key), default)


@dataclass(frozen=True)
class Plan:
    """Buffers and the steps that fill them, in execution order."""

    bound: Bound
    buffers: tuple[Buffer, ...]
    steps: tuple[Step, ...]
    output: int  # buffer index of the final result
    out_shape: tuple[int, ...]
    out_dtype: np.dtype
    path: tuple[tuple[int, ...], ...]
    largest_intermediate: int = 0
    backend: str = "cpu"
    out_strides: tuple[int, ...] = ()  # element strides the output is written with
    precision: str = "highest"  # "tf32": fp32 GEMM steps may run on tensor cores in tf32
    notes: tuple[str, ...] = field(default_factory=tuple)


class ShapeLike:
    """ndim and itemsize from ``shape`` and ``dtype``: what bind reads besides strides."""

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize


@dataclass(frozen=True)
class ArraySpec(ShapeLike):
    """What planning reads from an operand (shape, byte strides, dtype), with no data.

    Used where einc plans for arrays it does not hold (device arrays, `plan_for`,
    `contract_path(shapes=True)`): unlike a strided numpy view over a dummy buffer, nothing
    can read through it by accident (a repr in a traceback included).
    """

    shape: tuple
    strides: tuple  # bytes
    dtype: np.dtype

    @property
    def flags(self):
        from types import SimpleNamespace
        item = self.dtype.itemsize
        c, f = [], []
        acc = item
        for n in reversed(self.shape):
            c.append(acc)
            acc *= n
        acc = item
        for n in self.shape:
            f.append(acc)
            acc *= n
        c_ok = all(s == e for (s, n), e in zip(zip(self.strides, self.shape), reversed(c)) if n != 1)
        f_ok = all(s == e for (s, n), e in zip(zip(self.strides, self.shape), f) if n != 1)
        return SimpleNamespace(c_contiguous=c_ok, f_contiguous=f_ok, writeable=True)


def offset_table(extents, strides) -> np.ndarray:
    """Element offsets of every multi-index of a mode group, the last mode fastest: the
    table a gett kernel reads a group of several modes through.

    >>> offset_table((2, 3), (10, 1)).tolist()
    [0, 1, 2, 10, 11, 12]
    """
    off = np.zeros(1, dtype=np.int64)
    for n, s in zip(extents, strides):
        off = (off[:, None] + np.arange(n, dtype=np.int64) * s).ravel()
    return off
