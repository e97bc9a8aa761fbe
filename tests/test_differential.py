"""Random valid einsums against numpy.einsum (the backbone of einc's correctness)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import einc
from oracle import assert_matches

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
          "float64", "complex64", "complex128"]
LABELS = "abcdefgh"


def make_array(rng, shape, dtype, noncontig):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = rng.random(shape) < 0.5
    elif dt.kind in "iu":
        a = rng.integers(-3 if dt.kind == "i" else 0, 4, size=shape).astype(dt)
    elif dt.kind == "c":
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    else:
        a = rng.standard_normal(shape).astype(dt)
    if noncontig and a.ndim >= 1 and a.size:
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), dtype=dt)
        big[..., ::2] = a
        a = big[..., ::2]
        if a.ndim >= 2 and noncontig == 2:
            a = np.ascontiguousarray(np.swapaxes(a, 0, 1)).swapaxes(0, 1)  # Fortran-ish
    return a


@st.composite
def einsums(draw):
    nops = draw(st.integers(1, 6))
    sizes = {l: draw(st.sampled_from([1, 2, 3, 4, 5] if draw(st.integers(0, 12)) else [0]))
             for l in LABELS}
    use_ell = draw(st.integers(0, 3)) == 0
    ell_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    terms, shapes = [], []
    for _ in range(nops):
        n = draw(st.integers(0, 4))
        labels = draw(st.lists(st.sampled_from(LABELS[:6]), min_size=n, max_size=n))
        shape = [sizes[l] for l in labels]
        for j, l in enumerate(labels):  # broadcast a size-1 axis against the others
            if draw(st.integers(0, 9)) == 0 and labels.count(l) == 1:
                shape[j] = 1
        term = "".join(labels)
        if use_ell and draw(st.booleans()):
            pos = draw(st.integers(0, len(labels)))
            k = draw(st.integers(0, len(ell_shape)))
            eshape = [1 if draw(st.integers(0, 3)) == 0 else e for e in ell_shape[len(ell_shape) - k:]]
            term = term[:pos] + "..." + term[pos:]
            shape = shape[:pos] + eshape + shape[pos:]
        terms.append(term)
        shapes.append(tuple(shape))
    seen = [l for t in terms for l in t if l != "."]
    has_ell = any("..." in t for t in terms)
    if draw(st.booleans()):
        out = draw(st.permutations(sorted(set(seen))))
        out = "".join(out[: draw(st.integers(0, len(out)))])
        if has_ell and draw(st.integers(0, 4)):
            pos = draw(st.integers(0, len(out)))
            out = out[:pos] + "..." + out[pos:]
        subscripts = ",".join(terms) + "->" + out
    else:
        subscripts = ",".join(terms)
    mixed = draw(st.integers(0, 4)) == 0
    base = draw(st.sampled_from(DTYPES))
    dtypes = [draw(st.sampled_from(DTYPES)) if mixed else base for _ in range(nops)]
    noncontig = [draw(st.integers(0, 2)) for _ in range(nops)]
    strategy = draw(st.sampled_from([None, None, "generic", "reduce", "gett"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return subscripts, shapes, dtypes, noncontig, strategy, seed


def case_operands(case):
    """The operands of a generated case; rejects cases numpy itself would refuse."""
    subscripts, shapes, dtypes, noncontig, strategy, seed = case
    rng = np.random.default_rng(seed)
    ops = [make_array(rng, s, d, nc) for s, d, nc in zip(shapes, dtypes, noncontig)]
    try:
        np.einsum(subscripts, *[np.zeros(o.shape) for o in ops], optimize=True)
    except ValueError:
        assume(False)  # not a valid einsum for numpy (the generator over-approximates)
    return ops


def check_random_case(case, backend):
    """Run one generated einsum on ``backend`` and compare it with numpy."""
    subscripts, shapes, _, _, strategy, _ = case
    ops = case_operands(case)
    got = einc.einsum(subscripts, *ops, strategy=strategy, backend=backend)
    terms = max(1, int(np.prod([max(1, n) for s in shapes for n in s])))
    assert_matches(got, subscripts, *ops, terms=terms)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsums())
def test_random_einsums_match_numpy(case):
    check_random_case(case, "cpu")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 70), st.integers(1, 70), st.integers(0, 70), st.integers(1, 3),
       st.sampled_from(["float32", "float64"]), st.sampled_from(["ij,jk->ik", "ji,jk->ki", "bij,bjk->bik", "ij,kj->ik"]))
def test_gemm_shapes_match_numpy(m, n, k, b, dtype, subscripts):
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    dims = {"i": m, "j": k, "k": n, "b": b}
    lhs, rhs = subscripts.split("->")[0].split(",")
    a = rng.standard_normal([dims[c] for c in lhs]).astype(dtype)
    c = rng.standard_normal([dims[c] for c in rhs]).astype(dtype)
    got = einc.einsum(subscripts, a, c, strategy="gett")
    assert_matches(got, subscripts, a, c, terms=max(k, 1))
