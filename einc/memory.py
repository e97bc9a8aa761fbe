"""memory_limit: the bytes a plan's temporaries may hold at once, enforced when planning.

opt_einsum's ``memory_limit`` caps the largest intermediate only, in elements. einc's caps
what a call really allocates besides its operands and result: every temporary buffer of
the plan (intermediates, private-label pre-sums, split-K partial sums, GEMM-order and
tensor-core copies, complex-as-real scratch). Both executors allocate all of a plan's
temporaries for the whole call, so their sum is the call's peak (``temp_bytes``).

``plan_within`` plans as asked, then, while the peak exceeds the limit, plans again with
less: without the rewrites that add copies, with tighter caps on the largest
intermediate, and finally as one loop nest over all operands (no temporaries, numpy's
``optimize=False`` cost). An explicit path or a forced strategy is kept as given: if it
does not fit, EincValueError names the limit and the smallest peak found. All of this
happens while planning, before anything is allocated.
"""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from .dtypes import accumulator
from .errors import EincError, EincValueError
from .ir import Bound, Plan

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)(?:e(\d+))?\s*([a-z]*)\s*$")
MAX_REPLANS = 12  # tighter intermediate caps tried before the single loop nest


def temp_bytes(plan: Plan) -> int:
    """Bytes of every temporary buffer ``plan`` allocates for a call (its peak).

    >>> from einc.api import plan_for
    >>> temp_bytes(plan_for("ij,jk,kl->il", [(8, 9), (9, 10), (10, 11)]))  # one 8x10 float64
    640
    """
    return sum(b.size * np.dtype(b.dtype).itemsize for b in plan.buffers if b.role == "temp")


def limit_bytes(memory_limit, bound: Bound | None = None, itemsize: int = 8):
    """``memory_limit`` in bytes, or None for no limit.

    Takes a number of bytes, a string with a unit ("512MB", "32GiB", "1.5 kB"; SI and
    binary units) or "max_input": as many bytes as the largest operand has elements,
    each of ``itemsize`` (the accumulation dtype's), i.e. opt_einsum's rule that nothing
    exceeds the largest input, applied to all temporaries together. None or -1: no limit.

    >>> limit_bytes("32GiB"), limit_bytes("512MB"), limit_bytes(4096), limit_bytes(None)
    (34359738368, 512000000, 4096, None)
    """
    if memory_limit is None or (_is_number(memory_limit) and memory_limit == -1):
        return None
    if isinstance(memory_limit, str):
        text = memory_limit.strip().lower()
        if text == "max_input":
            if bound is None:
                raise EincValueError("memory_limit='max_input' needs the operands")
            return max((lay.size for lay in bound.inputs), default=0) * itemsize
        m = _SIZE.match(text)
        if m is None or m.group(3) not in _UNITS:
            raise EincValueError(f"memory_limit={memory_limit!r}: use a number of bytes, a size such as "
                                 "'512MB' or '32GiB', 'max_input', or None")
        value = float(m.group(1)) * 10 ** int(m.group(2) or 0) * _UNITS[m.group(3)]
        return int(value)
    if not _is_number(memory_limit) or not math.isfinite(memory_limit) or memory_limit < 0:
        raise EincValueError(f"memory_limit={memory_limit!r}: use a number of bytes >= 0, a size "
                             "such as '512MB', 'max_input', or None (-1 also means no limit)")
    return int(memory_limit)


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _explicit(optimize) -> bool:
    return optimize is False or (isinstance(optimize, (list, tuple)) and not _numpy_pair(optimize))


def _numpy_pair(optimize) -> bool:
    """numpy's ``optimize=('greedy', memory_limit)``, whose limit counts elements."""
    return (isinstance(optimize, tuple) and len(optimize) == 2 and isinstance(optimize[0], str)
            and not isinstance(optimize[1], tuple))


def plan_within(make_plan, bound: Bound, out_strides, out_dtype, result_dtype, optimize="auto",
                memory_limit=None, strategy=None, backend="cpu") -> Plan:
    """``make_plan`` (plan.plan) with its temporaries' peak bounded by ``memory_limit``.

    >>> import numpy as np
    >>> from einc.api import plan_for
    >>> p = plan_for("ij,jk,kl->il", [(8, 9), (9, 10), (10, 11)], memory_limit=100)
    >>> temp_bytes(p), len(p.steps)  # no room for the 640-byte intermediate: one loop nest
    (0, 1)
    """
    item = accumulator(np.dtype(result_dtype)).itemsize
    if _numpy_pair(optimize):
        optimize, elems = optimize
        memory_limit = None if elems in (None, -1) else limit_bytes(elems) * item
    limit = limit_bytes(memory_limit, bound, item)
    if limit is None:
        return make_plan(bound, out_strides, out_dtype, result_dtype, optimize, None, strategy, backend)
    tried = []

    def attempt(opt, cap, strat, rewrites):
        try:
            p = make_plan(bound, out_strides, out_dtype, result_dtype, opt, cap, strat, backend,
                          rewrites=rewrites)
        except RuntimeError as e:  # opt_einsum's dp: "no contraction found for memory_limit"
            if isinstance(e, EincError):
                raise
            return None
        tried.append(temp_bytes(p))
        return p

    cap = max(1, limit // item)  # no single intermediate above the limit, in elements
    candidates = [(optimize, cap, strategy, True), (optimize, cap, strategy, False)]
    for opt, c, strat, rewrites in candidates:
        p = attempt(opt, c, strat, rewrites)
        if p is not None and tried[-1] <= limit:
            return _noted(p, limit, tried[-1], len(tried))
    if not _explicit(optimize):  # drop the largest intermediate of the last plan, again and again
        p = attempt(optimize, cap, strategy, False)
        for _ in range(MAX_REPLANS):
            sizes = [b.size for b in (p.buffers if p else ()) if b.role == "temp"]
            cap = max(sizes, default=1) - 1
            if cap < 1:
                break
            p = attempt(optimize, cap, strategy, False)
            if p is not None and tried[-1] <= limit:
                return _noted(p, limit, tried[-1], len(tried))
    if strategy is None and not _explicit(optimize):  # one loop nest: no temporaries at all
        p = attempt(False, None, "generic" if len(bound.inputs) == 2 else None, False)
        if p is not None and tried[-1] <= limit:
            return _noted(p, limit, tried[-1], len(tried))
    kept = "the explicit path" if _explicit(optimize) else f"strategy={strategy!r}"
    raise EincValueError(
        f"memory_limit={memory_limit!r} allows {limit} bytes of temporaries, but the smallest "
        f"plan einc found with {kept} needs {min(tried, default=0)} bytes "
        f"(peak of {len(tried)} plan(s) tried); raise the limit, or pass a path optimizer name "
        f"and no strategy so einc may choose a leaner plan")


def _noted(plan: Plan, limit: int, peak: int, attempts: int) -> Plan:
    note = f"memory_limit: {peak} bytes of temporaries (limit {limit}"
    note += ")" if attempts == 1 else f"; re-planned {attempts - 1} time(s) to fit)"
    return dataclasses.replace(plan, notes=tuple(plan.notes) + (note,))
