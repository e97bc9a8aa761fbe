"""Slicing: a contraction too big for one device, as many small identical ones.

Fixing a few labels ("slicing" them) to each of their values turns one contraction into
``nslices`` independent ones whose results are summed (a summed label) or stacked (an
output label). In einc's stride model a slice is a pointer offset with those modes
dropped, so ONE per-slice Plan, compiled once, serves every slice: each slice's operands
are numpy views of the same strides.

**The per-slice peak** (what ``memory_limit`` bounds, per device) is every byte one slice
holds at once on its worker: the operands' slices, the per-slice plan's temporaries laid
out in one arena by lifetime (a temporary's bytes are reused once it is dead), the slice's
result and, when summed labels are sliced and a task runs several slices, the task's
running sum. Not counted: each worker's GEMM packing scratch (3 to 13 MB per thread,
reused by every call), the full operands (``SlicedPlan.input_bytes``; resident once per
worker), and the caller's assembled result.

The path comes from opt_einsum (or any ``optimize=`` einc takes, cotengra's optimizers
included); the sliced labels from einc's greedy slicer (repeatedly slice the label that
most lowers the peak per FLOP it adds) or cotengra's SliceFinder, whichever needs fewer
slices (``slicer="auto"``).

>>> import numpy as np
>>> sp = plan_sliced("ij,jk,kl->il", [(64, 64)] * 3, memory_limit="64KiB")
>>> sp.nslices > 1, sp.peak_bytes <= 65536
(True, True)
"""
from __future__ import annotations

import dataclasses
import math
import uuid

import numpy as np

from .errors import EincValueError
from .ir import ArraySpec, Plan
from .memory import limit_bytes

TASK_FLOPS = 2e9  # FLOPs a task should do at least (CPU: ~0.1 s, far over dask's ~1 ms a task)
MAX_SLICED = 64   # labels the greedy slicer may fix before giving up


@dataclasses.dataclass(frozen=True)
class SlicedPlan:
    """A contraction planned as ``nslices`` slices of one compiled per-slice plan.

    ``terms``/``output`` spell the bound einsum with one symbol per label (``labels``
    maps them back to the user's); ``sliced`` are the fixed symbols (output ones first:
    they are stacked, the rest summed), ``sliced_extents`` their extents; ``plan`` is the
    per-slice Plan; ``block`` slices run per task, in order, into one partial sum.
    """

    terms: tuple[str, ...]
    output: str
    labels: tuple[tuple[str, object], ...]
    extents: tuple[tuple[str, int], ...]
    in_strides: tuple[tuple[int, ...], ...]  # element strides of each bound operand
    dtypes: tuple[np.dtype, ...]
    sliced: tuple[str, ...]
    sliced_extents: tuple[int, ...]
    path: tuple[tuple[int, ...], ...]
    plan: Plan
    peak_bytes: int
    limit: int | None
    arena_bytes: int
    arena_offsets: tuple[tuple[int, int], ...]  # (buffer index, byte offset)
    input_bytes: int
    flops: int  # unsliced contraction, by the path model
    sliced_flops: int  # all slices together, by the same model
    block: int
    token: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def nslices(self) -> int:
        return math.prod(self.sliced_extents)

    @property
    def stacked(self) -> tuple[str, ...]:
        return tuple(s for s in self.sliced if s in self.output)

    @property
    def groups(self) -> int:
        """Output slices (combinations of the stacked labels); each is a sum of slices."""
        return math.prod(self.sliced_extents[:len(self.stacked)])

    @property
    def per_group(self) -> int:
        return self.nslices // self.groups

    @property
    def overhead_flops(self) -> int:
        return self.sliced_flops - self.flops

    @property
    def nblocks(self) -> int:
        return self.groups * -(-self.per_group // self.block)

    def block_at(self, i: int) -> tuple[int, int, int]:
        """(output slice, first, stop) of task ``i``: slices ``first..stop-1`` of that group."""
        per = -(-self.per_group // self.block)
        g, j = divmod(i, per)
        return g, j * self.block, min(self.per_group, (j + 1) * self.block)

    def blocks(self):
        """(group, first, stop) of every task, in the fixed order partials are summed."""
        return [self.block_at(i) for i in range(self.nblocks)]

    def slice_index(self, k: int) -> tuple[int, ...]:
        """The value of each sliced label in slice ``k`` (row-major over ``sliced``)."""
        return tuple(int(v) for v in np.unravel_index(k, self.sliced_extents)) if self.sliced else ()

    def describe(self) -> str:
        """What `einc explain --memory-limit` prints."""
        name = dict(self.labels)
        ext = ", ".join(f"{name[s]}={n}" + (" (stacked)" if s in self.output else "")
                        for s, n in zip(self.sliced, self.sliced_extents))
        over = self.overhead_flops / self.flops if self.flops else 0.0
        return "\n".join([
            f"sliced: {ext or '(none: fits unsliced)'}",
            f"slices: {self.nslices} in {self.nblocks} task(s) of up to {self.block}",
            f"per-slice peak: {self.peak_bytes} bytes (limit {self.limit}; temporaries arena "
            f"{self.arena_bytes}, operands resident {self.input_bytes})",
            f"slicing overhead: {self.overhead_flops} FLOPs ({100 * over:.2f}% over {self.flops})"])


# ---------------------------------------------------------------------------------------
# the path model: sizes and FLOPs of every intermediate, given the sliced labels

class PathModel:
    """Per-slice peak (elements) and FLOPs of a pairwise path with some labels fixed.

    Inputs stay resident for the whole slice; an intermediate lives from the step that
    makes it to the step that consumes it; a step holds its operands and its result.

    >>> m = PathModel(["ij", "jk"], "ik", {"i": 4, "j": 5, "k": 6}, [(0, 1)])
    >>> m.peak(()), m.flops(()), m.peak(("j",))
    (74, 240, 34)
    """

    def __init__(self, terms, output, ext, path):
        self.ext, self.output = dict(ext), output
        self.tensors = [set(t) for t in terms]
        live = list(range(len(terms)))
        self.steps = []  # (operand ids, result id, labels of the contraction)
        for c in path:
            ids = [live[i] for i in c]
            for i in sorted(c, reverse=True):
                del live[i]
            rest = set(output).union(*(self.tensors[j] for j in live))
            union = set().union(*(self.tensors[j] for j in ids))
            self.tensors.append(union & rest)
            live.append(len(self.tensors) - 1)
            self.steps.append((ids, len(self.tensors) - 1, union))
        self.n_inputs = len(terms)

    def _size(self, labels, fixed) -> int:
        return math.prod(self.ext[l] for l in labels if l not in fixed)

    def trace(self, fixed):
        """(peak elements, index of the step where it occurs)."""
        base = sum(self._size(self.tensors[i], fixed) for i in range(self.n_inputs))
        live, best, at = 0, base, -1
        for s, (ids, res, _) in enumerate(self.steps):
            size = self._size(self.tensors[res], fixed)
            if base + live + size > best:
                best, at = base + live + size, s
            live += size - sum(self._size(self.tensors[i], fixed) for i in ids if i >= self.n_inputs)
        return best, at

    def peak(self, fixed) -> int:
        return self.trace(fixed)[0]

    def flops(self, fixed) -> int:
        """All slices together: each step's points times (operands) multiply-adds."""
        per = sum(self._size(u, fixed) * max(1, len(ids)) for ids, _, u in self.steps)
        return per * math.prod(self.ext[l] for l in fixed)


def greedy_slices(model: PathModel, target: int, fixed=()):
    """Labels to slice, one by one, until ``model.peak`` <= ``target`` elements.

    Each round tries the labels of the tensors live at the peak and takes the one that
    removes the most peak per FLOP it adds (a label adding none wins on peak alone).

    >>> m = PathModel(["ij", "jk", "kl"], "il", dict(i=8, j=8, k=8, l=8), [(0, 1), (0, 1)])
    >>> greedy_slices(m, 150)  # i alone leaves 152: the inputs' slices and two results
    ('i', 'k')
    """
    fixed = list(fixed)
    for _ in range(MAX_SLICED):
        peak, at = model.trace(fixed)
        if peak <= target:
            return tuple(fixed)
        if at < 0:  # the inputs alone: slice any label of the largest input
            cands = set().union(*model.tensors[:model.n_inputs])
        else:
            ids, res, union = model.steps[at]
            cands = set(union)
        cands = sorted(l for l in cands if l not in fixed and model.ext[l] > 1)
        if not cands:
            break
        base_flops = model.flops(fixed)
        best = None
        for l in cands:
            p = model.peak(fixed + [l])
            added = model.flops(fixed + [l]) - base_flops
            gain = math.log(peak) - math.log(max(p, 1))
            # a label that adds no FLOPs and lowers the peak wins outright, the largest gain first
            free = added <= 0 and gain > 0
            score = (free, gain if free else gain / max(added, 1e-9 * base_flops + 1))
            if best is None or score > best[0]:
                best = (score, l)
        fixed.append(best[1])
    raise EincValueError(f"slicing cannot bring the per-slice peak to {target} elements")


def cotengra_slices(model: PathModel, terms, output, target: int):
    """Labels cotengra's SliceFinder picks for the same path, tightened until the peak fits."""
    import cotengra as ctg
    path = [tuple(ids) for ids, _, _ in model.steps]
    tree = ctg.ContractionTree.from_path([tuple(t) for t in terms], tuple(output), model.ext,
                                         ssa_path=path)
    size = target
    for _ in range(MAX_SLICED):
        sf = ctg.SliceFinder(tree, target_size=max(1, size), allow_outer=True)
        fixed, _ = sf.search(max_repeats=8)
        fixed = tuple(fixed)
        if model.peak(fixed) <= target:
            return fixed
        size //= 2
        if size < 1:
            break
    raise EincValueError(f"cotengra's SliceFinder cannot bring the peak to {target} elements")


# ---------------------------------------------------------------------------------------
# the per-slice plan and its arena

def arena_layout(plan: Plan, align: int = 64):
    """(byte offset of every temporary, arena bytes): temporaries whose lifetimes (first
    to last step touching them) overlap never share bytes; the others may.

    >>> from einc.api import plan_for
    >>> p = plan_for("ij,jk,kl,lm->im", [(8, 8)] * 4)
    >>> offsets, nbytes = arena_layout(p)
    >>> nbytes < sum(b.size * 8 for b in p.buffers if b.role == "temp") or len(offsets) < 3
    True
    """
    root = {}
    for i, b in enumerate(plan.buffers):
        root[i] = b.index if b.role == "alias" else i
    life = {}
    for s, step in enumerate(plan.steps):
        for b in (step.result, *step.operands):
            r = root[b]
            if plan.buffers[r].role == "temp":
                lo, hi = life.get(r, (s, s))
                life[r] = (min(lo, s), max(hi, s))
    temps = [i for i, b in enumerate(plan.buffers) if b.role == "temp"]
    nbytes = {i: -(-max(1, plan.buffers[i].size) * np.dtype(plan.buffers[i].dtype).itemsize // align) * align
              for i in temps}
    placed, offsets = [], {}
    for i in sorted(temps, key=lambda i: (-nbytes[i], i)):
        lo, hi = life.get(i, (0, len(plan.steps)))
        clash = sorted((o, o + nbytes[j]) for j, o in placed
                       if not (life.get(j, (0, len(plan.steps)))[1] < lo or hi < life.get(j, (0, len(plan.steps)))[0]))
        at = 0
        for a, b in clash:
            if at + nbytes[i] <= a:
                break
            at = max(at, b)
        offsets[i] = at
        placed.append((i, at))
    total = max((offsets[i] + nbytes[i] for i in temps), default=0)
    return tuple(sorted(offsets.items())), total


def _drop(term, sliced):
    return "".join(c for c in term if c not in sliced)


def _slice_plan(terms, output, ext, in_strides, dtypes, sliced, path, dtype, strategy, backend):
    """The per-slice Plan: the einsum with ``sliced`` dropped, over views of those strides."""
    from .api import _build
    from .ir import Spec
    from .plan import knobs
    sterms = [_drop(t, sliced) for t in terms]
    arrays = []
    for t, st, d in zip(terms, in_strides, dtypes):
        keep = [(ext[c], s * d.itemsize) for c, s in zip(t, st) if c not in sliced]
        arrays.append(ArraySpec(tuple(n for n, _ in keep), tuple(s for _, s in keep), d))
    spec = Spec(tuple(tuple(t) for t in sterms), tuple(_drop(output, sliced)),
                text=",".join(sterms) + "->" + _drop(output, sliced))
    return _build(spec, arrays, None, dtype, "C", "safe", tuple(path), None, knobs(strategy, None),
                  compile=False, backend=backend)


def bound_einsum(subscripts, operands, dtype=None):
    """(bound, terms, output, labels, extents, element strides, dtypes, result dtype) of an
    einsum, one symbol per label: every later stage sees distinct labels per operand.
    ``subscripts`` is a string or ``(input label lists, output labels)``."""
    import opt_einsum as oe
    from .api import _result_dtype, _split_args, _validate
    from .bind import bind
    if isinstance(subscripts, str):
        spec, raw = _split_args((subscripts, *operands))
    else:  # (input label lists, output labels): labels of any hashable kind, as the sublist form
        from .ir import Spec
        ins, out = subscripts
        spec, raw = Spec(tuple(tuple(t) for t in ins), tuple(out)), list(operands)
    arrays = [ArraySpec(tuple(x), tuple(s * np.dtype(dtype or np.float64).itemsize
                                        for s in _row_major(tuple(x))), np.dtype(dtype or np.float64))
              if isinstance(x, (tuple, list)) else np.asarray(x) for x in raw]
    arrays = _validate(arrays) if all(isinstance(a, np.ndarray) for a in arrays) else arrays
    bound = bind(spec, arrays)
    sym = {}
    for lay in bound.inputs:
        for l in lay.labels:
            sym.setdefault(l, oe.get_symbol(len(sym)))
    for l in bound.output:
        sym.setdefault(l, oe.get_symbol(len(sym)))
    terms = tuple("".join(sym[l] for l in lay.labels) for lay in bound.inputs)
    output = "".join(sym[l] for l in bound.output)
    ext = {sym[l]: n for l, n in bound.extents}
    res = _result_dtype(bound.dtypes, dtype, "safe")
    return (bound, terms, output, tuple((s, l) for l, s in sym.items()), ext,
            tuple(lay.strides for lay in bound.inputs), tuple(bound.dtypes), res)


def _row_major(shape):
    from .plan import row_major
    return row_major(shape)


def plan_sliced(subscripts, operands, memory_limit, dtype=None, optimize="auto", slicer="auto",
                block=None, strategy=None, backend="cpu") -> SlicedPlan:
    """A SlicedPlan whose per-slice peak (module docstring) is at most ``memory_limit``.

    ``operands`` are arrays, or shapes (then C-contiguous operands of ``dtype``, default
    float64, are assumed). ``slicer``: "einc" (greedy), "cotengra" (SliceFinder) or
    "auto" (both when cotengra is installed; fewer slices, then fewer FLOPs, wins).
    ``block``: slices per task (default: enough for ``TASK_FLOPS``, at most one output slice).

    >>> sp = plan_sliced("ij,jk->ik", [(32, 32), (32, 32)], "20KiB")
    >>> sp.sliced, sp.nslices, sp.stacked
    (('a',), 32, ('a',))
    """
    from .dtypes import accumulator
    from .path import contraction_path
    bound, terms, output, labels, ext, in_strides, dtypes, res = bound_einsum(subscripts, operands, dtype)
    limit = limit_bytes(memory_limit, bound, accumulator(res).itemsize)
    path, _ = contraction_path(bound, optimize)
    path = [tuple(c) for c in path] or [(0,)]
    model = PathModel(terms, output, ext, path)
    item = accumulator(res).itemsize
    target = max(1, (limit if limit is not None else 2**62) // item)
    for _ in range(24):
        choices = []
        if slicer in ("einc", "auto"):
            choices.append(greedy_slices(model, target))
        if slicer == "cotengra" or (slicer == "auto" and _has_cotengra()):
            try:
                choices.append(cotengra_slices(model, terms, output, target))
            except EincValueError:
                if slicer == "cotengra":
                    raise
        if not choices:
            raise EincValueError(f"slicer={slicer!r}: use 'auto', 'einc' or 'cotengra' (installed)")
        fixed = min(choices, key=lambda f: (math.prod(ext[l] for l in f), model.flops(f), f))
        sp = _finish(terms, output, labels, ext, in_strides, dtypes, res, fixed, path, model,
                     limit, block, strategy, backend)
        if limit is None or sp.peak_bytes <= limit:
            return sp
        target = target * limit // sp.peak_bytes - 1  # einc's own temporaries: aim lower
        if target < 1:
            break
    raise EincValueError(f"memory_limit={memory_limit!r}: no slicing found whose per-slice peak fits "
                         f"{limit} bytes")


def _has_cotengra() -> bool:
    try:
        import cotengra  # noqa: F401
        return True
    except ImportError:
        return False


def _finish(terms, output, labels, ext, in_strides, dtypes, res, fixed, path, model, limit,
            block, strategy, backend) -> SlicedPlan:
    stacked = [l for l in fixed if l in output]
    fixed = tuple(stacked + sorted(l for l in fixed if l not in output))
    plan = _slice_plan(terms, output, ext, in_strides, dtypes, set(fixed), path, res, strategy, backend)
    offsets, arena = arena_layout(plan)
    n_sum = math.prod(ext[l] for l in fixed if l not in output)
    slice_flops = max(1, sum(s.flops for s in plan.steps))
    if block is None:
        block = int(min(n_sum, max(1, math.ceil(TASK_FLOPS / slice_flops))))
    block = max(1, min(int(block), n_sum))
    out_bytes = math.prod(ext[l] for l in output if l not in fixed) * np.dtype(plan.out_dtype).itemsize
    in_slices = sum(math.prod(ext[c] for c in t if c not in fixed) * d.itemsize for t, d in zip(terms, dtypes))
    peak = in_slices + arena + out_bytes * (2 if block > 1 else 1)
    full = sum(math.prod(ext[c] for c in t) * d.itemsize for t, d in zip(terms, dtypes))
    return SlicedPlan(terms, output, labels, tuple(sorted(ext.items())), in_strides, dtypes, fixed,
                      tuple(ext[l] for l in fixed), tuple(path), plan, peak, limit, arena, offsets,
                      full, model.flops(()), model.flops(fixed), block)
