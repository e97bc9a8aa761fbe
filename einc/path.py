"""The pairwise contraction order: ``optimize=`` exactly as numpy and opt_einsum take it."""
from __future__ import annotations

import opt_einsum as oe

from .errors import EincValueError
from .ir import Bound

PATH_OPTIONS = ("auto", "auto-hq", "optimal", "branch-all", "branch-2", "branch-1", "greedy",
                "eager", "opportunistic", "dp", "dynamic-programming", "random-greedy",
                "random-greedy-128")


def equation(bound: Bound) -> str:
    """The bound einsum as an opt_einsum string (one symbol per distinct label)."""
    sym: dict = {}

    def s(label):
        if label not in sym:
            sym[label] = oe.get_symbol(len(sym))
        return sym[label]

    terms = ["".join(s(l) for l in lay.labels) for lay in bound.inputs]
    return ",".join(terms) + "->" + "".join(s(l) for l in bound.output)


def normalize_optimize(optimize, memory_limit):
    """(kind, memory_limit) with kind a path tuple, an opt_einsum name or optimizer."""
    if isinstance(optimize, tuple) and len(optimize) == 2 and isinstance(optimize[0], str) \
            and not isinstance(optimize[1], tuple):  # numpy's ('greedy', memory_limit)
        optimize, memory_limit = optimize
    if optimize is None or optimize is True:
        optimize = "auto"
    if optimize is False:
        return False, memory_limit
    if isinstance(optimize, str):
        if optimize not in PATH_OPTIONS:
            raise EincValueError(f"optimize={optimize!r} is not a path optimizer; use one of "
                                 f"{', '.join(PATH_OPTIONS)}, True, False or an explicit path")
        return optimize, memory_limit
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize)
        if steps and steps[0] == "einsum_path":
            steps = steps[1:]
        try:
            return tuple(tuple(int(i) for i in c) for c in steps), memory_limit
        except (TypeError, ValueError) as e:
            raise EincValueError(f"optimize path {optimize!r} is not a list of index tuples") from e
    if isinstance(optimize, oe.paths.PathOptimizer):
        return optimize, memory_limit
    raise EincValueError(f"optimize={optimize!r} is not understood: pass a bool, a path "
                         f"optimizer name, a path list or an opt_einsum PathOptimizer")


def check_path(path, n: int) -> None:
    """An explicit path must contract ``n`` operands down to one, by valid indices."""
    live = n
    for c in path:
        if not c or len(set(c)) != len(c) or any(i < 0 or i >= live for i in c):
            raise EincValueError(f"optimize path step {c} is invalid with {live} operands left")
        live = live - len(c) + 1
    if live != 1 and n > 0:
        raise EincValueError(f"optimize path {list(path)} leaves {live} operands, not 1")


def contraction_path(bound: Bound, optimize="auto", memory_limit=None):
    """``(path, info)`` for a bound einsum; info is opt_einsum's PathInfo."""
    kind, limit = normalize_optimize(optimize, memory_limit)
    n = len(bound.inputs)
    if isinstance(limit, str) and limit != "max_input":
        raise EincValueError(f"memory_limit={limit!r}: use a number of elements or 'max_input'")
    if kind is False:
        kind = (tuple(range(n)),)
    if isinstance(kind, tuple):
        check_path(kind, n)
        # numpy runs a lone operand through one step even when the path names none
        # (optimize=[] or ['einsum_path']); an empty plan would leave the output unwritten
        kind = [tuple(c) for c in kind] or [(0,)]
    shapes = [lay.extents for lay in bound.inputs]
    try:
        path, info = oe.contract_path(equation(bound), *shapes, shapes=True, optimize=kind,
                                      memory_limit=limit)
    except (ValueError, TypeError, KeyError) as e:
        raise EincValueError(f"opt_einsum could not plan this einsum with optimize={optimize!r}: {e}") from e
    return [tuple(c) for c in path], info
