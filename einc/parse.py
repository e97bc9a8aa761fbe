"""Front end: einsum subscripts (a string, or numpy's sublists) -> ``Spec``.

Two string forms share one Lark grammar (``grammar/einsum.lark``):

* letter form, numpy's: every letter (``str.isalpha()``, any script, either case) is one
  label: ``"ij,jk->ik"``, ``"...ij,...jk"``, ``",ij->ij"``, ``"ii"``.
* named form: labels are identifiers separated by whitespace, ``...`` is a token:
  ``"batch row k, batch k col -> batch row col"``.

The rule that picks the form: split the text into terms at ``,`` and ``->``; if some term
has two or more whitespace-separated tokens (``...`` counts as one, so ``"... row"`` has
two), it is the named form, otherwise the letter form. Whitespace around terms therefore
keeps numpy's meaning (``"ab, bc -> ac"`` is the letter form); it is only whitespace
*inside* a term that says "these are names". One consequence: numpy ignores spaces
anywhere, so ``"i j"`` is the named form here (labels ``i`` and ``j``, the same thing) and
``"ij k"`` means labels ``ij`` and ``k`` rather than ``i``, ``j``, ``k``.

Implicit output (no ``->``) follows numpy: ``...`` first if any input has one, then the
labels that occur exactly once over all inputs (a label repeated inside one operand, as in
``"ii"``, occurs twice), sorted. Strings sort by code point, as numpy's letters do; sublist
labels of mixed types sort by ``(type name, label)``, or by ``repr`` if even that fails
to compare (e.g. tuples holding mixed types).
"""
from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from einc.errors import EincSpecError, EincSyntaxError, EincTypeError
from einc.ir import Spec

# Built once: building an LALR table costs milliseconds, parsing a spec microseconds.
_PARSER = Lark(
    (Path(__file__).parent / "grammar" / "einsum.lark").read_text(encoding="utf-8"),
    parser="lalr",
    start=["letter", "named"],
)


@functools.lru_cache(maxsize=4096)
def _parse(subscripts: str) -> Spec:
    named = _is_named(subscripts)
    try:
        tree = _PARSER.parse(subscripts, start="named" if named else "letter")
    except (UnexpectedCharacters, UnexpectedToken, UnexpectedEOF) as err:
        raise _syntax_error(subscripts, err, named) from None
    inputs_tree, *output_tree = tree.children
    inputs = tuple(_term(t, subscripts, named) for t in inputs_tree.children)
    output = _term(output_tree[0], subscripts, named) if output_tree else None
    return _make_spec(inputs, output, subscripts, f" (in {subscripts!r})")


def parse(subscripts: str) -> Spec:
    """Parse an einsum subscripts string (letter or named form; see the module docstring)."""
    if not isinstance(subscripts, str):  # checked here: lru_cache would fail on a list
        raise EincTypeError(f"subscripts must be a str, got {type(subscripts).__name__}")
    return _parse(subscripts)


def parse_sublists(args: tuple) -> tuple[Spec, list]:
    """Parse numpy's sublist form ``(op0, sub0, op1, sub1, ..., [out])``.

    Labels are any hashable objects (compared as dict keys, so ``1``, ``1.0`` and ``True``
    are one label), ``...`` (Ellipsis) marks an ellipsis; there is no 52-label limit.
    Returns the spec (``text=None``) and the operands, untouched.
    """
    args = tuple(args)
    if len(args) < 2:
        raise EincSpecError("the sublist form needs at least one operand followed by its sublist")
    operands = list(args[0:-1:2] if len(args) % 2 else args[0::2])
    inputs = tuple(_sublist(sub, f"sublist of operand {i}") for i, sub in enumerate(args[1::2]))
    output = None
    if len(args) % 2:
        # An odd count means the last argument is the output; say so, since the usual
        # cause is an operand whose sublist was forgotten.
        output = _sublist(args[-1], "output sublist (the last argument, as the count is odd)")
    return _make_spec(inputs, output, None, " (output sublist)"), operands


def _is_named(subscripts: str) -> bool:
    """The form rule of the module docstring: some term has >= 2 whitespace-separated tokens."""
    return any(len(term.split()) >= 2 for term in subscripts.replace("->", ",").split(","))


def _term(tree, subscripts: str, named: bool) -> tuple:
    labels = []
    for tok in tree.children:
        if tok.type == "ELLIPSIS":
            labels.append(...)
            continue
        # The grammar's regexes approximate isalpha()/isidentifier() (Python's re has no
        # \p{L}); these checks make the definitions exact.
        if named and not tok.isidentifier():
            bad = next(i for i in range(len(tok)) if not tok[: i + 1].isidentifier())
            raise EincSyntaxError(
                f"invalid name {str(tok)!r}: names are identifiers (letters, digits, '_', "
                "not starting with a digit)", subscripts, tok.start_pos + bad)
        if not named and not tok.isalpha():
            raise _bad_char(subscripts, tok.start_pos, named)
        labels.append(str(tok))  # a plain str: Spec should not hold lexer tokens
    return tuple(labels)


def _sublist(sub, where: str) -> tuple:
    if not isinstance(sub, (list, tuple)):
        raise EincTypeError(f"{where} must be a list or tuple of labels, got {type(sub).__name__}")
    for label in sub:
        try:
            hash(label)
        except TypeError:
            raise EincTypeError(f"{where}: label {label!r} is not hashable") from None
    if sum(label is ... for label in sub) > 1:
        raise EincSpecError(f"{where}: more than one '...'")
    return tuple(sub)


def _make_spec(inputs, output, text, where) -> Spec:
    has_ellipsis = any(label is ... for term in inputs for label in term)
    if output is None:
        counts = Counter(label for term in inputs for label in term if label is not ...)
        once = _sorted([label for label, n in counts.items() if n == 1])
        return Spec(inputs, ((...,) if has_ellipsis else ()) + tuple(once), True, text)
    known = {label for term in inputs for label in term}
    seen = set()
    for label in output:
        if label is ...:  # numpy accepts an output ellipsis that covers no dimensions
            if label in seen:
                raise EincSpecError(f"the output has '...' more than once{where}")
            seen.add(label)
            continue
        if label not in known:
            raise EincSpecError(f"output label {label!r} does not appear in any input{where}")
        if label in seen:
            raise EincSpecError(f"output label {label!r} appears more than once{where}")
        seen.add(label)
    return Spec(inputs, output, False, text)


def _sorted(labels: list) -> list:
    # The type name keeps ints and strs apart; for labels of one type it is plain sorting.
    try:
        return sorted(labels, key=lambda x: (type(x).__name__, x))
    except TypeError:
        return sorted(labels, key=repr)


def _syntax_error(subscripts: str, err, named: bool) -> EincSyntaxError:
    """Turn a Lark error into an EincSyntaxError that names the culprit and points at it."""
    if isinstance(err, UnexpectedEOF):  # unreachable with this grammar; kept for safety
        return EincSyntaxError("unexpected end of subscripts", subscripts, len(subscripts))
    if isinstance(err, UnexpectedCharacters):
        return _bad_char(subscripts, err.pos_in_stream, named)
    tok = err.token
    # Every term may be empty, so the only tokens the grammar can reject are these three;
    # anything else is a character the root lexer matched but this form does not allow.
    if tok.type == "ELLIPSIS":
        message = "more than one '...' in one term"
    elif tok.value == "->":
        message = "'->' appears more than once"
    elif tok.value == ",":
        message = "',' after '->': the output is a single term"
    else:
        return _bad_char(subscripts, tok.start_pos, named)
    return EincSyntaxError(message, subscripts, tok.start_pos)


def _bad_char(subscripts: str, pos: int, named: bool) -> EincSyntaxError:
    c = subscripts[pos]
    if c == ".":
        message = "'.' that is not part of an ellipsis '...'"
    elif c == "-":
        message = "'-' not followed by '>'"
    elif c == ">":
        message = "'>' not preceded by '-'"
    elif named and c.isdigit():
        message = f"name starting with the digit {c!r}: names are identifiers"
    elif not named and (c.isdigit() or c == "_" or c.isalnum()):
        message = (f"{c!r} is not a label: in the letter form every label is one letter "
                   "(put spaces between names, as in 'x1 y1, y1 z1', for named axes)")
    else:
        message = f"invalid character {c!r}"
    return EincSyntaxError(message, subscripts, pos)
