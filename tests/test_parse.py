"""Tests for einc.parse: both string forms, sublists, implicit output vs numpy, errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from einc.errors import EincError, EincSpecError, EincSyntaxError, EincTypeError
from einc.ir import Spec
from einc.parse import parse, parse_sublists

E = ...  # the ellipsis label


# ---------------------------------------------------------------- numpy as the oracle

# Distinct labels get distinct extents (3, 4, ... in sorted order) and the ellipsis covers
# (1, 2), sizes no label has, so an output shape identifies the output labels and their
# order. Small extents keep numpy fast on random specs.
_ELLIPSIS_SHAPE = (1, 2)


def _sizes(terms):
    labels = sorted({x for t in terms for x in t if x is not E})
    return {x: i + 3 for i, x in enumerate(labels)}


def _operand(term, sizes):
    shape = []
    for label in term:
        shape.extend(_ELLIPSIS_SHAPE if label is E else [sizes[label]])
    return np.zeros(shape)


def check_against_numpy(subscripts):
    """Parse, then check the output labels against the shape numpy.einsum produces."""
    spec = parse(subscripts)
    sizes = _sizes(spec.inputs)
    theirs = np.einsum(subscripts, *[_operand(t, sizes) for t in spec.inputs]).shape
    assert _operand(spec.output, sizes).shape == theirs
    return spec


# ---------------------------------------------------------------- letter form

@pytest.mark.parametrize("text, inputs, output", [
    ("ij,jk->ik", (("i", "j"), ("j", "k")), ("i", "k")),
    ("ij->ji", (("i", "j"),), ("j", "i")),
    ("i,i->", (("i",), ("i",)), ()),
    ("ii->i", (("i", "i"),), ("i",)),
    ("iij->j", (("i", "i", "j"),), ("j",)),
    ("...ij,...jk->...ik", ((E, "i", "j"), (E, "j", "k")), (E, "i", "k")),
    ("i...j->j...i", (("i", E, "j"),), ("j", E, "i")),
    ("ij...->...", (("i", "j", E),), (E,)),
    ("...->...", ((E,),), (E,)),
    (",ij->ij", ((), ("i", "j")), ("i", "j")),
    ("i,->i", (("i",), ()), ("i",)),
    ("->", ((),), ()),
    (",->", ((), ()), ()),
    ("Ab,bC->AC", (("A", "b"), ("b", "C")), ("A", "C")),
    ("αβ,βγ->αγ", (("α", "β"), ("β", "γ")), ("α", "γ")),
    ("ЖЯ,яж->Жж", (("Ж", "Я"), ("я", "ж")), ("Ж", "ж")),
])
def test_letter_explicit(text, inputs, output):
    assert parse(text) == Spec(inputs, output, implicit=False, text=text)


@pytest.mark.parametrize("text", [
    "ij,jk->ik", " ij,jk->ik", "ij ,jk->ik", "ij, jk->ik", "ij,jk ->ik", "ij,jk-> ik",
    "ij,jk->ik ", "  ij  ,  jk  ->  ik  ", "ij,\tjk\n->ik",
])
def test_letter_whitespace_around_terms(text):
    spec = parse(text)
    assert spec.inputs == (("i", "j"), ("j", "k")) and spec.output == ("i", "k")
    assert spec.text == text


def test_single_name_terms_stay_letter_form():
    # One token per term: numpy's letter form even though the text looks "spaced out".
    spec = parse("ab, bc -> ac")
    assert spec.inputs == (("a", "b"), ("b", "c")) and spec.output == ("a", "c")
    assert parse("row, col").inputs == (("r", "o", "w"), ("c", "o", "l"))
    assert parse("...row").inputs == ((E, "r", "o", "w"),)  # no whitespace inside the term


@pytest.mark.parametrize("text", [
    "ij,jk", "ij,jk,kl", "ba", "ij", "ii", "iij", "ij,ij", "ij,jk,ki", "i,i", "i,j", "",
    ",", "Ba", "bA", "aB", "zyxA", "...ij,...jk", "ij...,jk", "...", "i...i", "ab...,...bc",
    ",i", "i,", "ii,i", "ijj,k",
])
def test_letter_implicit_matches_numpy(text):
    assert check_against_numpy(text).implicit


def test_implicit_examples():
    assert parse("ij,jk").output == ("i", "k")
    assert parse("ba").output == ("a", "b")  # sorted: an implicit transpose
    assert parse("ii").output == ()  # the trace: i occurs twice within one operand
    assert parse("iij").output == ("j",)
    assert parse("Ba").output == ("B", "a")  # upper case sorts first, as in numpy
    assert parse("...ji").output == (E, "i", "j")
    assert parse("ij,...k").output == (E, "i", "j", "k")


# A random letter-form input list, ellipses included.
_terms = st.lists(
    st.tuples(st.lists(st.sampled_from("abcdeAB"), max_size=4), st.integers(-1, 4)),
    min_size=1, max_size=4,
)


def _render(terms):
    out = []
    for labels, at in terms:
        labels = list(labels)
        if 0 <= at <= len(labels):
            labels.insert(at, "...")
        out.append("".join(labels))
    return ",".join(out)


@settings(max_examples=300, deadline=None)
@given(_terms)
def test_random_implicit_matches_numpy(terms):
    check_against_numpy(_render(terms))


@settings(max_examples=200, deadline=None)
@given(_terms, st.data())
def test_random_explicit_roundtrip(terms, data):
    text = _render(terms)
    labels = sorted({c for c in text if c.isalpha()})
    out = data.draw(st.permutations(labels))[: data.draw(st.integers(0, len(labels)))]
    ell = "..." if "..." in text else ""
    full = f"{text}->{ell}{''.join(out)}"
    spec = check_against_numpy(full)
    assert spec.output == ((E,) if ell else ()) + tuple(out)


# ---------------------------------------------------------------- named form

def test_named_explicit():
    text = "batch row k, batch k col -> batch row col"
    assert parse(text) == Spec(
        (("batch", "row", "k"), ("batch", "k", "col")), ("batch", "row", "col"), False, text)


def test_named_with_ellipsis():
    spec = parse("... row k, k col -> ... row col")
    assert spec.inputs == ((E, "row", "k"), ("k", "col"))
    assert spec.output == (E, "row", "col")
    # "..." needs no space around it once the text is in the named form.
    compact = parse("...row k, k col->...row col")
    assert (compact.inputs, compact.output) == (spec.inputs, spec.output)
    assert parse("a ... b").inputs == (("a", E, "b"),)
    assert parse("a b ...").inputs == (("a", "b", E),)


def test_ellipsis_counts_as_a_token():
    # "... row" is two whitespace-separated tokens, so the whole text is the named form.
    spec = parse("... row, row col")
    assert spec.inputs == ((E, "row"), ("row", "col"))
    assert spec.output == (E, "col")


def test_named_single_name_terms_mixed():
    # One multi-token term makes every term a name list, single-name terms included.
    spec = parse("i j, jk, kl -> i kl")
    assert spec.inputs == (("i", "j"), ("jk",), ("kl",))
    assert spec.output == ("i", "kl")


def test_named_identifiers():
    spec = parse("x_1 y2 _z, y2 ΔT -> x_1 _z ΔT")
    assert spec.inputs == (("x_1", "y2", "_z"), ("y2", "ΔT"))
    assert spec.output == ("x_1", "_z", "ΔT")


def test_named_scalars_and_empty_terms():
    assert parse("a b, , -> b a").inputs == (("a", "b"), (), ())
    assert parse("a b, ->").output == ()


def test_named_implicit():
    spec = parse("batch row k, batch k col")
    assert spec.implicit and spec.output == ("col", "row")
    assert parse("x x y").output == ("y",)  # repeats within an operand count
    assert parse("... b a, c a").output == (E, "b", "c")


def test_named_same_as_letter_when_names_are_letters():
    assert parse("i j, j k -> i k").inputs == parse("ij,jk->ik").inputs
    assert parse("i j, j k").output == parse("ij,jk").output


def _render_named(terms, rename):
    out = []
    for labels, at in terms:
        tokens = [rename[c] for c in labels]
        if 0 <= at <= len(labels):
            tokens.insert(at, "...")
        out.append(" ".join(tokens))
    return ", ".join(out)


@settings(max_examples=200, deadline=None)
@given(_terms)
def test_random_named_matches_letter(terms):
    # Renaming every letter to a long name and spacing tokens out keeps the structure
    # (the renaming keeps the sort order, so implicit outputs correspond too).
    rename = {c: f"ax_{ord(c):05d}_{c}" for c in "abcdeAB"}
    letter = parse(_render(terms))
    if all(len(t) < 2 for t in letter.inputs):
        return  # no term has two tokens ("..." counts): the text would be letter form
    named = parse(_render_named(terms, rename))
    def ren(labels):
        return tuple(E if c is E else rename[c] for c in labels)
    assert named.inputs == tuple(ren(t) for t in letter.inputs)
    assert named.output == ren(letter.output)


# ---------------------------------------------------------------- caching, types

def test_cached():
    assert parse("ij,jk->ik") is parse("ij,jk->ik")


def test_not_a_string():
    with pytest.raises(EincTypeError, match="must be a str"):
        parse(["ij"])


# ---------------------------------------------------------------- syntax errors

@pytest.mark.parametrize("text, culprit, column", [
    ("i$j", "'$'", 1),
    ("ij,j#k->ik", "'#'", 4),
    ("ij->i->j", "'->'", 5),
    ("ij->ik->", "'->'", 6),
    ("i.j", "'.'", 1),
    ("..ij", "'.'", 0),
    ("ij..->ij", "'.'", 2),
    ("....ij", "'.'", 3),
    ("...i...j", "'...'", 4),
    ("...ij,j...k...", "'...'", 11),
    ("i2j", "'2'", 1),
    ("ij,jk->i3", "'3'", 8),
    ("i_j", "'_'", 1),
    ("i²", "'²'", 1),
    ("ij-", "'-'", 2),
    ("ij-k", "'-'", 2),
    ("ij>k", "'>'", 2),
    ("ij->k,l", "','", 5),
    ("a b -> c, d", "','", 8),
    ("a b, 1c -> a", "'1'", 5),
    ("a b²", "'b²'", 3),
    ("a ... b ...", "'...'", 8),
    ("a b -> a -> b", "'->'", 9),
    ("a $b", "'$'", 2),
    ("a. b", "'.'", 1),
])
def test_syntax_errors(text, culprit, column):
    with pytest.raises(EincSyntaxError) as info:
        parse(text)
    err = info.value
    assert culprit in str(err).splitlines()[0]
    assert err.position == column and err.subscripts == text
    # The caret line points under the culprit.
    assert str(err).splitlines()[-1] == "  " + " " * column + "^"
    assert isinstance(err, ValueError) and isinstance(err, EincError)


# ---------------------------------------------------------------- spec errors

@pytest.mark.parametrize("text, message", [
    ("ij->k", "output label 'k' does not appear in any input"),
    ("ij,jk->iz", "output label 'z' does not appear in any input"),
    ("a b -> c", "output label 'c' does not appear in any input"),
    ("ij->ii", "output label 'i' appears more than once"),
    ("a b -> b a b", "output label 'b' appears more than once"),
])
def test_spec_errors(text, message):
    with pytest.raises(EincSpecError, match=message.replace(".", r"\.")) as info:
        parse(text)
    assert repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


# ---------------------------------------------------------------- sublists

def test_sublists_explicit_and_implicit():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    spec, ops = parse_sublists((a, [0, 1], b, [1, 2], [0, 2]))
    assert spec == Spec(((0, 1), (1, 2)), (0, 2), False, None)
    assert ops[0] is a and ops[1] is b
    spec, ops = parse_sublists((a, [0, 1], b, (1, 2)))
    assert spec == Spec(((0, 1), (1, 2)), (0, 2), True, None)
    assert len(ops) == 2


@pytest.mark.parametrize("subs", [
    [[0, 1], [1, 2]], [[1, 0]], [[0, 0]], [[0, 0, 1]], [[E, 0, 1], [E, 1, 2]], [[2, E], [0]],
    [[3, 1], [1, 2], [2, 0]], [[0, 1], [1, 2], [0, 2]], [[5, 51], [51, 26]],
])
def test_sublists_implicit_matches_numpy(subs):
    sizes = _sizes(subs)
    args = [x for s in subs for x in (_operand(s, sizes), s)]
    spec, _ = parse_sublists(tuple(args))
    assert _operand(spec.output, sizes).shape == np.einsum(*args).shape


def test_sublists_any_hashable_labels():
    spec, _ = parse_sublists(("A", ["row", ("k", 1)], "B", [("k", 1), "col"], ["row", "col"]))
    assert spec.inputs == (("row", ("k", 1)), (("k", 1), "col"))
    assert spec.output == ("row", "col")
    spec, _ = parse_sublists(("A", [E, "x", (1, 2)], "B", ["x", 3]))
    assert spec.output == (E, 3, (1, 2))  # sorted by type name: int < tuple


def test_sublists_many_labels():
    labels = list(range(300))
    spec, _ = parse_sublists(("A", labels, "B", labels[::-1][:250]))  # shares 50..299
    assert spec.output == tuple(range(50))
    spec, _ = parse_sublists(("A", labels, labels[::-1]))
    assert spec.output == tuple(labels[::-1]) and len(set(spec.output)) == 300


def test_sublists_mixed_type_order():
    spec, _ = parse_sublists(("A", ["b", 2, "a", 1, (0, 1)]))
    assert spec.output == (1, 2, "a", "b", (0, 1))  # int < str < tuple, then by value
    # Tuples that cannot be compared with each other fall back to repr order.
    spec, _ = parse_sublists(("A", [(1, "x"), ("y", 2)]))
    assert spec.output == tuple(sorted([(1, "x"), ("y", 2)], key=repr))


def test_sublists_errors():
    with pytest.raises(EincTypeError, match="operand 1.*list or tuple.*int"):
        parse_sublists(("A", [0], "B", 7))
    with pytest.raises(EincTypeError, match="operand 0.*list or tuple.*str"):
        parse_sublists(("A", "ij"))
    with pytest.raises(EincTypeError, match=r"operand 1: label \[1\] is not hashable"):
        parse_sublists(("A", [0], "B", [0, [1]]))
    with pytest.raises(EincTypeError, match="output sublist.*ndarray"):
        parse_sublists((np.ones(2), [0], np.ones(2)))  # a forgotten sublist
    with pytest.raises(EincSpecError, match=r"operand 0: more than one '\.\.\.'"):
        parse_sublists(("A", [E, 0, E]))
    with pytest.raises(EincSpecError, match="output label 5 does not appear"):
        parse_sublists(("A", [0, 1], [5]))
    with pytest.raises(EincSpecError, match="output label 0 appears more than once"):
        parse_sublists(("A", [0, 1], [0, 0]))
    assert parse_sublists(("A", [0, 1], [E, 0]))[0].output == (E, 0)  # numpy accepts it
    with pytest.raises(EincSpecError, match="at least one operand"):
        parse_sublists(("A",))
