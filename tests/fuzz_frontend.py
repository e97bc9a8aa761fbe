"""Front-end fuzzing: strategies for arbitrary calls and the contract every call must keep.

The contract (docs/reliability.md): a call to ``einc.einsum``, ``contract_path``,
``contract_expression`` or the CLI either returns numpy's answer or raises an
``einc.EincError`` subclass — never another exception, a crash or a hang. ``outcome``
runs one generated case and returns its kind ("correct", "error:<Class>", ...) or raises
``ContractBroken``. tests/test_fuzz_frontend.py runs it under CI's fixed seed;
scripts/fuzz.py runs it for many fresh inputs and counts the outcomes.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


TIME_LIMIT_S = 20  # per input; shapes are tiny, so only a first compile takes long

LETTERS = "ijkab"
SPECIAL = list("ijkabIJ.,-> ") + ["...", "->", ",", " ", "\t", "é", "α", "²", "Ⅻ", "0", "7",
                                  "_", "$", "\x00", "\U0001d4b3", "ǅ", "\u200b", "x1", ")"]
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
          "float64", "complex64", "complex128"]


class ContractBroken(AssertionError):
    """A call broke the contract: a foreign exception, a wrong answer or a timeout."""


# ------------------------------------------------------------------ values and operands

def _values(rng, shape, dtype):
    """Small integer values, so every float sum here is exact and comparisons are tight."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    lo = 0 if dt.kind == "u" else -2
    a = rng.integers(lo, 3, size=shape)
    if dt.kind == "c":
        a = a + 1j * rng.integers(-2, 3, size=shape)
    return a.astype(dt)


@st.composite
def operands(draw, shape):
    """An operand of roughly ``shape``: mostly a numpy array, sometimes anything at all."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from(DTYPES))
    kind = draw(st.sampled_from(["array"] * 40 + ["list", "ragged", "scalar", "0d", "object",
                                                  "str", "none", "hugendim", "view", "fortran",
                                                  "bigendian", "longdouble", "datetime", "neg"]))
    a = _values(rng, shape, dtype)
    if kind == "list":
        return a.tolist()
    if kind == "ragged":
        return [[1, 2], [3]] if draw(st.booleans()) else [a.tolist(), [1]]
    if kind == "scalar":
        return draw(st.sampled_from([1, -2, 2.5, 1j, True, 2**70, np.float32(2), np.int8(-3)]))
    if kind == "0d":
        return np.array(draw(st.sampled_from([1, 2.0, 1 + 1j, False])))
    if kind == "object":
        return a.astype(object)
    if kind == "str":
        return draw(st.sampled_from(["ab", "", np.array(["a", "b"])]))
    if kind == "none":
        return None
    if kind == "hugendim":
        return np.ones((1,) * draw(st.integers(20, 64)))
    if kind == "view" and a.ndim:
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    if kind == "neg" and a.ndim:
        return a[..., ::-1]
    if kind == "fortran":
        return np.asfortranarray(a)
    if kind == "bigendian":
        return a.astype(a.dtype.newbyteorder(">"))
    if kind == "longdouble":
        return a.real.astype(np.longdouble) if a.dtype.kind == "c" else a.astype(np.longdouble)
    if kind == "datetime":
        return np.zeros(shape, "M8[D]")
    return a


# ------------------------------------------------------------------ subscripts

@st.composite
def valid_letter_spec(draw):
    """(terms, output or None, sizes): a numpy-style einsum over LETTERS, maybe with '...'."""
    nops = draw(st.integers(1, 4))
    terms = []
    for _ in range(nops):
        t = "".join(draw(st.lists(st.sampled_from(LETTERS), max_size=3)))
        if draw(st.integers(0, 4)) == 0:
            pos = draw(st.integers(0, len(t)))
            t = t[:pos] + "..." + t[pos:]
        terms.append(t)
    seen = sorted({c for t in terms for c in t if c != "."})
    out = None
    if draw(st.booleans()):
        out = "".join(draw(st.permutations(seen))[: draw(st.integers(0, len(seen)))])
        if any("..." in t for t in terms) and draw(st.booleans()):
            out = "..." + out
    sizes = {c: draw(st.sampled_from([1, 2, 3, 0] if draw(st.integers(0, 9)) == 0 else [1, 2, 3]))
             for c in LETTERS}
    return terms, out, sizes


def _join(terms, out):
    return ",".join(terms) + ("" if out is None else "->" + out)


@st.composite
def mutated(draw, text):
    """``text`` with a few random insertions, deletions and replacements."""
    chars = list(text)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["ins", "del", "rep"]))
        pos = draw(st.integers(0, len(chars)))
        piece = draw(st.sampled_from(SPECIAL) | st.characters())
        if op == "ins" or not chars:
            chars.insert(pos, piece)
        elif op == "del":
            del chars[min(pos, len(chars) - 1)]
        else:
            chars[min(pos, len(chars) - 1)] = piece
    return "".join(chars)


@st.composite
def named_text(draw):
    names = draw(st.lists(st.sampled_from(["row", "col", "k", "b", "x1", "é", "_t", "N"]),
                          min_size=1, max_size=6))
    terms, cur = [], []
    for n in names:
        cur.append(n)
        if draw(st.booleans()):
            terms.append(" ".join(cur))
            cur = []
    terms.append(" ".join(cur) + (" ..." if draw(st.integers(0, 3)) == 0 else ""))
    text = " , ".join(terms)
    if draw(st.booleans()):
        text += " -> " + " ".join(draw(st.permutations(sorted(set(names))))[: draw(st.integers(0, 3))])
    return text


def _guess_shapes(text, sizes, draw):
    """Shapes for the terms a text seems to have (letters, names, '...'), then perturbed."""
    lhs = text.split("->")[0]
    shapes = []
    for term in lhs.split(","):
        labels = term.split() if len(term.split()) >= 2 else [c for c in term.replace("...", "") if c.isalpha()]
        shape = [sizes.get(l, 2) for l in labels]
        if "..." in term:
            shape = [draw(st.sampled_from([1, 2]))] * draw(st.integers(0, 2)) + shape
        if draw(st.integers(0, 15)) == 0:  # wrong ndim or size
            shape = shape[:-1] if shape and draw(st.booleans()) else shape + [draw(st.integers(1, 4))]
        if shape and draw(st.integers(0, 15)) == 0:
            shape[draw(st.integers(0, len(shape) - 1))] = draw(st.integers(0, 5))
        shapes.append(tuple(shape))
    n = draw(st.integers(0, 19))
    if n == 0:
        shapes = shapes[:-1]
    elif n == 1:
        shapes.append((2,))
    return shapes


SUBLIST_LABELS = [0, 1, 2, -1, -7, 2**64, 10**30, None, 1.5, 0.0, True, (1, 2), (1, "a"),
                  "i", "row", b"x", frozenset(), 3 + 4j]


@st.composite
def sublist_args(draw, terms, out):
    """The sublist form of a letter spec, its labels mapped to random hashables."""
    letters = sorted({c for t in terms for c in t if c != "."})
    pool = draw(st.permutations(SUBLIST_LABELS))
    table = dict(zip(letters, pool))
    if draw(st.integers(0, 5)) == 0:  # garbage labels: unhashable, nested lists, strings
        table[letters[0] if letters else "i"] = draw(st.sampled_from([[1], {"a": 1}, ...]))

    def sub(t):
        s = [table[c] for c in t.replace("...", ".") if c != "."]
        if "..." in t:
            s.insert(len(t.split("...")[0]), ...)
        return s if draw(st.integers(0, 9)) else tuple(s) if draw(st.booleans()) else "".join(t)
    return [sub(t) for t in terms], None if out is None else sub(out)


# ------------------------------------------------------------------ keyword values

OPTIMIZE = ["auto", True, False, "greedy", "optimal", "dp", "branch-2", "fastest", None, 5, 1.5,
            [(0, 1)], ["einsum_path", (0, 1)], [(0,)], [], ("greedy", 10), ("greedy", "x"),
            [(0, 5)], [(-1, 0)], [("a",)], [1.5], [(0, 0)], object(), "einsum_path",
            np.array([[0, 1]]), [np.int64(0), np.int64(1)], [(0, 1), (0, 1)], [(2**70, 0)]]
KWARGS = {
    "optimize": OPTIMIZE,
    "dtype": [None, "float32", "float64", "int32", "int8", "uint8", "complex64", "bool",
              "float16", np.float32, "object", "U3", 5, "bogus", np.longdouble, "M8", [1]],
    "order": ["K", "C", "F", "A", "X", None, 1, [1], "c", np.array(["C", "F"])],
    "casting": ["no", "equiv", "safe", "same_kind", "unsafe", "sometimes", None, [1],
                np.array(["no", "safe"])],
    "strategy": [None, "generic", "reduce", "gett", "magic", 5, [1]],
    "backend": ["cpu", "cpu", "auto", "gpu", None, 5, [1]],
    "precision": [None, "highest", "tf32", "bf16", 5, [1]],
    "memory_limit": [None, 10, "max_input", -1, "x", 1e9, [1]],
}


@st.composite
def kwargs(draw):
    kw = {}
    for name, values in KWARGS.items():
        if draw(st.integers(0, 9)) == 0:
            kw[name] = draw(st.sampled_from(values))
    return kw


# ------------------------------------------------------------------ whole calls

@st.composite
def einsum_cases(draw):
    """("einsum", args, kwargs, out kind): string, mutated, named or sublist form."""
    terms, out, sizes = draw(valid_letter_spec())
    form = draw(st.sampled_from(["valid"] * 6 + ["mutated"] * 2 + ["text", "named", "sublist", "sublist"]))
    if form == "sublist":
        subs, osub = draw(sublist_args(terms, out))
        shapes = _guess_shapes(_join(terms, out), sizes, draw)
        ops = [draw(operands(s)) for s in shapes]
        args = [x for pair in zip(ops, subs) for x in pair] + ([] if osub is None else [osub])
        if draw(st.integers(0, 9)) == 0 and args:
            del args[draw(st.integers(0, len(args) - 1))]
    else:
        text = {"valid": lambda: _join(terms, out),
                "mutated": lambda: draw(mutated(_join(terms, out))),
                "text": lambda: "".join(draw(st.lists(st.sampled_from(SPECIAL) | st.characters(), max_size=12))),
                "named": lambda: draw(named_text())}[form]()
        shapes = _guess_shapes(text, sizes, draw)
        args = [text] + [draw(operands(s)) for s in shapes]
    out_kind = draw(st.sampled_from(["none"] * 16 + ["ok", "ok", "shape", "list", "ro", "strided",
                                                     "0d", "overlap"]))
    return "einsum", tuple(args), draw(kwargs()), (out_kind, draw(st.sampled_from(DTYPES)))


SHAPE_ITEMS = [(2, 3), (3, 2), (), (3,), (2,), (0, 2), (-1, 2), (2**40, 2**40), (10**30,), 5, None,
               "2x3", (2.5, 3), (np.int64(2), 3), ("a",), [2, 3]]


@st.composite
def path_cases(draw):
    terms, out, sizes = draw(valid_letter_spec())
    text = _join(terms, out) if draw(st.integers(0, 3)) else draw(mutated(_join(terms, out)))
    shapes = _guess_shapes(text, sizes, draw)
    if draw(st.booleans()):
        if draw(st.integers(0, 3)) == 0:
            shapes = [draw(st.sampled_from(SHAPE_ITEMS)) for _ in shapes]
        return "path", (text, *shapes), {"shapes": True, **_pick(draw, ("optimize", "memory_limit"))}
    return "path", (text, *[draw(operands(s)) for s in shapes]), _pick(draw, ("optimize", "memory_limit"))


def _pick(draw, names):
    return {n: draw(st.sampled_from(KWARGS[n])) for n in names if draw(st.integers(0, 3)) == 0}


@st.composite
def expression_cases(draw):
    terms, out, sizes = draw(valid_letter_spec())
    text = _join(terms, out) if draw(st.integers(0, 3)) else draw(mutated(_join(terms, out)))
    shapes = _guess_shapes(text, sizes, draw)
    if draw(st.integers(0, 4)) == 0:
        shapes = [draw(st.sampled_from(SHAPE_ITEMS)) for _ in shapes]
    build = _pick(draw, ("optimize", "memory_limit", "strategy", "precision"))
    if draw(st.integers(0, 3)) == 0:
        build["dtype"] = draw(st.sampled_from(KWARGS["dtype"] + [["float32"], ("int8", "int8"), [None, 5]]))
    call_shapes = shapes if draw(st.integers(0, 3)) else _guess_shapes(text, sizes, draw)
    arrays = [draw(operands(s)) if isinstance(s, tuple) and all(isinstance(n, int) and 0 <= n < 6 for n in s)
              else s for s in call_shapes]
    call = _pick(draw, ("dtype", "order", "casting"))
    return ("expr", text, tuple(shapes), build, tuple(arrays), call,
            (draw(st.sampled_from(["none"] * 6 + ["ok", "shape", "overlap", "list", "ro", "0d"])),
             draw(st.sampled_from(DTYPES))))


CLI_WORDS = ["explain", "compile", "--shapes", "--dtype", "--optimize", "--strategy", "--target",
             "--backend", "llvm", "cuda", "cpu", "generic", "gett", "float32", "int8", "bogus",
             "2x3,3x4", "2x3", ",3", "x", "2x", "-1x2", "0x2,2x0", "1e3", "99999999999999999999x2",
             "ij,jk->ik", "ij", "ii->i", "i$", "...", "", "--", "-h", "greedy", "False", "[(0,1)]"]


@st.composite
def cli_cases(draw):
    cmd = draw(st.sampled_from(["explain", "compile"]))
    terms, out, sizes = draw(valid_letter_spec())
    text = _join(terms, out) if draw(st.integers(0, 2)) else draw(mutated(_join(terms, out)))
    shapes = ",".join("x".join(map(str, s)) for s in _guess_shapes(text, sizes, draw))
    argv = [cmd, text, "--shapes", shapes]
    if cmd == "compile":
        argv += ["--target", "llvm"]
    for _ in range(draw(st.integers(0, 3))):
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(CLI_WORDS)))
    return "cli", tuple(argv)


def cases():
    """Every kind of call the fuzzer makes."""
    return st.one_of(einsum_cases(), einsum_cases(), einsum_cases(), path_cases(),
                     expression_cases(), cli_cases())
