"""The fuzzing contract: run one generated call on einc and on numpy, and judge einc.

``outcome(case)`` returns a kind string:
  "correct"          einc returned numpy's answer (numpy is the oracle, on the same input)
  "error:<Class>"    einc raised that EincError and numpy rejected the call too
  "refused:<Class>"  einc raised that EincError where numpy answers (an intentional
                     difference: unsupported dtypes, einc-only keywords, ...)
  "cli:<rc>"         the CLI exited with that status
or raises ``ContractBroken``: another exception type, a wrong or missing answer, an answer
to a call numpy rejects (after translating einc's documented extensions into numpy's
terms), or more than TIME_LIMIT_S seconds.
"""
from __future__ import annotations

import contextlib
import io
import re
import signal
import warnings

import numpy as np

import einc
from einc.cli import main as cli_main
from fuzz_frontend import TIME_LIMIT_S, ContractBroken

ASCII = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # code-point order, as numpy sorts


class _Timeout(BaseException):  # not an Exception: nothing in einc may swallow it
    pass


@contextlib.contextmanager
def time_limit(seconds):
    def fire(*_):
        raise _Timeout()
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Timeout:
        raise ContractBroken(f"no answer within {seconds} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _einc(fn):
    """(result, None) or (None, EincError); any other exception breaks the contract."""
    try:
        with time_limit(TIME_LIMIT_S), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except einc.EincError as e:
        return None, e
    except ContractBroken:
        raise
    except BaseException as e:  # noqa: B036 - RecursionError, SystemExit, ... all count
        raise ContractBroken(f"raised {type(e).__name__}: {e}") from e


def _numpy(fn):
    """numpy's answer, or None where numpy rejects the call."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception:
        return None


# ------------------------------------------------------------------ einc's forms in numpy's terms

def _letters(labels):
    """Map distinct labels to numpy letters, keeping their sorted order (implicit outputs)."""
    if len(labels) > len(ASCII):
        return None
    return dict(zip(sorted(labels), ASCII))


def numpy_subscripts(text):
    """The letter-form string numpy reads as einc reads ``text`` (README, parse.py)."""
    named = any(len(t.split()) >= 2 for t in text.replace("->", ",").split(","))

    def tokens(term):
        if named:  # '...' is a token of its own even without spaces: 'ki...a' is ki ... a
            return [t for chunk in term.split() for t in re.split(r"(\.\.\.)", chunk) if t]
        return ["..." if p == "\0" else p for p in term.replace("...", "\0") if not p.isspace()]

    def letter(x):  # what is not a label einc accepts stays, for numpy to reject as well
        return "..." if x == "..." else table.get(x, x)
    lhs, arrow, rhs = text.partition("->")
    terms = [tokens(t) for t in lhs.split(",")]
    out = tokens(rhs) if arrow else None
    labels = {x for t in terms + [out or []] for x in t if (x.isidentifier() if named else x.isalpha())}
    table = _letters(labels)
    if table is None:
        return None
    join = lambda t: "".join(map(letter, t))  # noqa: E731
    return ",".join(map(join, terms)) + ("->" + join(out) if arrow else "")


def _sort_key(labels):
    try:
        return sorted(labels, key=lambda x: (type(x).__name__, x))
    except TypeError:
        return sorted(labels, key=repr)


def numpy_args(args):
    """``args`` of an einc call in a form numpy accepts with the same meaning, or None."""
    if not args:
        return None
    if isinstance(args[0], str):
        text = numpy_subscripts(args[0])
        return None if text is None else (text, *args[1:])
    if len(args) < 2 or not all(isinstance(s, (list, tuple)) for s in args[1::2]) or (
            len(args) % 2 and not isinstance(args[-1], (list, tuple))):
        return None
    subs = list(args[1::2]) + ([args[-1]] if len(args) % 2 else [])
    try:
        labels = dict.fromkeys(x for s in subs for x in s if x is not ...)
    except TypeError:
        return None
    if len(labels) > 52:
        return None
    # numpy sorts an implicit output's integer labels, so the labels that occur once (the
    # implicit output, parse.py) get integers in einc's documented order of just those
    counts = dict.fromkeys(labels, 0)
    for sub in args[1:len(args) - len(args) % 2:2]:
        for x in sub:
            if x is not ...:
                counts[x] += 1
    once = _sort_key([x for x, n in counts.items() if n == 1])
    table = {x: i for i, x in enumerate(once + [x for x in labels if counts[x] != 1])}
    subs = [[x if x is ... else table[x] for x in s] for s in subs]
    out = list(args)
    for i in range(1, len(args), 2):
        out[i] = subs[i // 2]
    if len(args) % 2:
        out[-1] = subs[-1]
    return tuple(out)


# ------------------------------------------------------------------ comparing answers

def _operands(nargs):
    """The operands of numpy-form args (after the string, or at even places before the output)."""
    if isinstance(nargs[0], str):
        return list(nargs[1:])
    return list(nargs[0:len(nargs) - len(nargs) % 2:2])


def _cast(nargs, dtype):
    """``nargs`` with every operand converted to ``dtype``."""
    if isinstance(nargs[0], str):
        return (nargs[0], *[np.asarray(x).astype(dtype) for x in nargs[1:]])
    pairs = len(nargs) - len(nargs) % 2
    return tuple(np.asarray(x).astype(dtype) if i < pairs and i % 2 == 0 else x for i, x in enumerate(nargs))


def np_einsum(nargs, **kw):
    """numpy's answer from its single loop nest (its default, and the definition), else
    with optimize=True, else None. (optimize=True promotes dtypes pair by pair along its
    path, so uint8, float16, int8 give float32 there and float16 in the loop nest; it also
    computes binary steps without out's dtype and sums bools as logical or.)

    An ellipsis reduced away (``...->``, README) is numpy's answer keeping the ellipsis
    dimensions in front, summed over them: numpy 2.4's loop nest refuses it, and its
    optimize=True runs out of letters past 52 dimensions."""
    r = _numpy(lambda: np.einsum(*nargs, optimize=False, **kw))
    if r is None:
        r = _numpy(lambda: np.einsum(*nargs, optimize=True, **kw))
    if r is None and isinstance(nargs[0], str) and "out" not in kw:
        lhs, arrow, rhs = nargs[0].partition("->")
        if arrow and "..." in lhs and "..." not in rhs:
            full = _numpy(lambda: np.einsum(f"{lhs}->...{rhs}", *nargs[1:], optimize=False, **kw))
            if full is not None:
                full = np.asarray(full)
                lead = tuple(range(full.ndim - len(rhs)))
                r = _numpy(lambda: full.sum(axis=lead, dtype=full.dtype.type)) if lead else full
    return r


def check_answer(got, ref, nargs, dtype=None, out=None):
    """einc's ``got`` is numpy's ``ref``: same shape and dtype, same values — exactly for
    integer computations (numpy's, in the computation dtype), else within a rounding bound of
    the float64 answer (operands are small integers, so it is tight)."""
    g, r = np.asarray(got), np.asarray(ref)
    if g.shape != r.shape or g.dtype != r.dtype:
        raise ContractBroken(f"got shape {g.shape} dtype {g.dtype}, numpy {r.shape} {r.dtype}")
    comp = np.dtype(dtype) if dtype is not None else np.result_type(
        *map(np.asarray, _operands(nargs)), *([] if out is None else [out.dtype]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if comp.kind in "iu":
            # operands cast to the computation dtype first, as numpy's loop nest does (its
            # optimize=True sums a bool operand in bool, logical or, before it meets an int one)
            r = np.asarray(np_einsum(_cast(nargs, comp))).astype(r.dtype)
        if r.dtype.kind in "biu":
            if not np.array_equal(g, r):
                raise ContractBroken(f"got {g!r}, numpy {r!r}")
            return
        wide = np.complex128 if r.dtype.kind == "c" or comp.kind == "c" else np.float64
        w = np.asarray(np_einsum(_cast(_cast(nargs, comp), wide))).astype(
            np.complex128 if r.dtype.kind == "c" else np.float64)
        eps = float(np.finfo(r.dtype).eps)
        close = np.abs(g.astype(w.dtype) - w) <= 64 * eps * np.abs(w) + 1e-300
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    if not np.all(close | same) or not np.array_equal(np.isnan(g), np.isnan(r)):
        raise ContractBroken(f"got {g!r}, numpy {r!r} (float64: {w!r})")


def reference(nargs, np_kw, out, operands):
    """numpy's answer for einc's call (None where numpy rejects it), with two documented
    differences resolved einc's way (docs/reliability.md):
    - numpy returns a view for a sum-free single-operand einsum and ignores dtype= there;
    - numpy's single-operand einsum also refuses an ``out`` it could not cast *back* to
      dtype= (its iterator opens out read-write); einc needs only result -> out castable."""
    r = None if nargs is None else np_einsum(nargs, **np_kw)
    if r is None:
        return None
    dtype = np_kw.get("dtype")
    if dtype is not None and np.asarray(r).dtype != np.dtype(dtype):
        r = _numpy(lambda: np.asarray(r).astype(dtype))  # None for numpy's object results
        if r is None:
            return None
    if out is None:
        return r
    np_out = _copy(out)
    if any(x is out and out.size for x in operands):  # einc refuses an out= that overlaps an input
        return None
    if np_einsum(nargs, out=np_out, **np_kw) is not None:
        return np_out
    casting = np_kw.get("casting", "safe")
    if (isinstance(out, np.ndarray) and out.flags.writeable and out.shape == np.shape(r)
            and np.can_cast(np.asarray(r).dtype, out.dtype, casting)):
        return np.asarray(r).astype(out.dtype)
    return None


def _make_out(spec, ref, operands):
    kind, dt = spec
    if kind == "none" or ref is None:
        return None
    shape = np.shape(ref)
    if kind == "overlap":
        return next((x for x in operands if isinstance(x, np.ndarray)), None)
    if kind == "shape":
        return np.zeros(shape + (2,), dt)
    if kind == "list":
        return np.zeros(shape).tolist()
    if kind == "0d":
        return np.zeros((), dt)
    if kind == "ro":
        a = np.zeros(shape, dt)
        a.flags.writeable = False
        return a
    if kind == "strided" and shape:
        return np.zeros(shape[:-1] + (shape[-1] * 2,), dt)[..., ::2]
    return np.zeros(shape, np.asarray(ref).dtype if kind == "ok" else dt)


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x


# ------------------------------------------------------------------ one case

def outcome(case) -> str:
    """Run ``case`` (from fuzz_frontend.cases()) and judge it; see the module docstring."""
    return {"einsum": _einsum_case, "path": _path_case, "expr": _expr_case, "cli": _cli_case}[case[0]](*case[1:])


def _einsum_case(args, kw, out_spec):
    nargs = numpy_args(args)
    np_kw = {k: kw[k] for k in ("dtype", "order", "casting") if k in kw}
    operands = args[1:] if args and isinstance(args[0], str) else args[0::2]
    out = _make_out(out_spec, reference(nargs, np_kw, None, operands), operands)
    ref = reference(nargs, np_kw, out, operands)
    got, err = _einc(lambda: einc.einsum(*args, **kw, **({} if out is None else {"out": out})))
    if err is not None:
        return ("refused:" if ref is not None else "error:") + type(err).__name__
    if ref is None:
        if _beyond_numpy(args, operands):
            return "beyond-numpy"
        raise ContractBroken(f"einc answered {got!r} where numpy rejects the call")
    if out is not None and got is not out:
        raise ContractBroken("einsum(..., out=out) did not return out")
    check_answer(got, ref, nargs, np_kw.get("dtype"), out)
    return "correct"


def _beyond_numpy(args, operands):
    """More dimensions than numpy's einsum takes (52 letters, 64 loop dimensions): einc's
    documented extension, which numpy cannot check."""
    return sum(np.ndim(x) for x in operands if isinstance(x, np.ndarray)) > 52


def _valid_path(path, n):
    live = n
    for c in path:
        if not c or any(not 0 <= i < live for i in c) or len(set(c)) != len(c):
            return False
        live -= len(c) - 1
    return live == 1 or n == 0


def _path_case(args, kw):
    shapes = kw.get("shapes", False)
    got, err = _einc(lambda: einc.contract_path(*args, **kw))
    nargs = numpy_args(args)
    ops = args[1:]
    small = shapes and all(isinstance(s, tuple) and all(type(n) is int and 0 <= n < 8 for n in s) for s in ops)
    if shapes and small:
        nargs = nargs and (nargs[0], *[np.zeros(s) for s in ops])
    checkable = nargs is not None and (small or not shapes)
    ref = None
    if checkable:  # a path exists where numpy plans one, or where it computes the einsum
        ref = _numpy(lambda: np.einsum_path(*nargs, optimize="greedy"))
        ref = np_einsum(nargs) if ref is None else ref
    if err is not None:
        return ("refused:" if ref is not None else "error:") + type(err).__name__
    bad_shape = shapes and not all(isinstance(s, (tuple, list)) and all(
        isinstance(n, (int, np.integer)) and n >= 0 for n in s) for s in ops)
    if checkable and ref is None and _beyond_numpy(args, ops):
        return "beyond-numpy"
    if (checkable and ref is None) or bad_shape:
        raise ContractBroken(f"contract_path answered {got!r} where numpy rejects the call")
    path, _ = got
    if not _valid_path(path, len(ops)):
        raise ContractBroken(f"contract_path gave an invalid path {path} for {len(ops)} operands")
    return "correct"


def _expr_case(text, shapes, build, arrays, call, out_spec):
    expr, err = _einc(lambda: einc.contract_expression(text, *shapes, **build))
    if err is not None:
        return "error:" + type(err).__name__
    nargs = numpy_args((text, *arrays))
    if any(_numpy(lambda: np.shape(a)) != s for a, s in zip(arrays, expr.shapes)):
        nargs = None  # the expression is for other shapes: it must refuse
    out = _make_out(out_spec, reference(nargs, call, None, arrays), arrays)
    ref = reference(nargs, call, out, arrays)
    got, err = _einc(lambda: expr(*arrays, **call, **({} if out is None else {"out": out})))
    if err is not None:
        return ("refused:" if ref is not None else "error:") + type(err).__name__
    if ref is None:
        raise ContractBroken(f"the expression answered {got!r} where numpy rejects the call")
    check_answer(got, ref, nargs, call.get("dtype"), out)
    return "correct"


def _cli_case(argv):
    stdout, stderr = io.StringIO(), io.StringIO()

    def run():
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                return cli_main(list(argv))
            except SystemExit as e:  # argparse's usage errors and --help
                return e.code
    rc, err = _einc(run)
    if err is not None:
        raise ContractBroken(f"the CLI raised {type(err).__name__}: {err}")
    if rc not in (0, 2):
        raise ContractBroken(f"the CLI exited with {rc!r}")
    if rc == 0 and not stdout.getvalue().strip():
        raise ContractBroken("the CLI succeeded but printed nothing")
    if rc == 2 and "Traceback" in stderr.getvalue():
        raise ContractBroken(f"the CLI printed a traceback: {stderr.getvalue()[-500:]}")
    return f"cli:{rc}"
