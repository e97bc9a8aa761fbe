"""CPU gett steps whose K dwarfs N run K-split across threads (execute._k_split_runner):
each thread writes a compact partial C, the partials are summed into C through C's own
offsets. Against numpy: ragged K cuts, strided/transposed/negative operands, batch
modes, complex, a non-contiguous or Fortran-order out=, 1-4 threads; and the steps that
must not take it (integers, big C, K not dominant)."""
from __future__ import annotations

import numpy as np
import pytest

import einc
from einc import api, execute
from oracle import assert_matches

rng = np.random.default_rng(5)


def rand(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.fixture(params=[2, 3, 4])
def threads(request, monkeypatch):
    monkeypatch.setenv("EINC_NUM_THREADS", str(request.param))
    monkeypatch.setattr(execute, "_POOL", None)
    yield request.param
    monkeypatch.setattr(execute, "_POOL", None)


def uses_k_split(subs, *ops):
    """Does the compiled plan run a step through the K-split runner?"""
    plan = api.plan_for(subs, [o.shape for o in ops], np.result_type(*ops).name)
    return any("_k_split_runner" in r.__qualname__ for r in execute.Executable(plan).runners)


CASES = [
    ("ik,kj->ij", [(70, 3001), (3001, 66)]),
    ("ki,kj->ij", [(2999, 65), (2999, 67)]),  # A transposed
    ("lik,jkl->ji", [(40, 63, 50), (67, 50, 40)]),  # ccsd ij-kil-lkj's layout, K = k*l
    ("bik,bkj->bij", [(3, 41, 700), (3, 700, 43)]),  # batch modes
]


@pytest.mark.parametrize("subs,shapes", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_k_split_matches_numpy(subs, shapes, dtype, threads):
    ops = [rand(s, dtype) for s in shapes]
    assert uses_k_split(subs, *ops)
    k = max(max(s) for s in shapes)
    for _ in range(2):  # planning call, cached call
        assert_matches(einc.einsum(subs, *ops), subs, *ops, terms=k)


@pytest.mark.parametrize("layout", ["strided", "negative", "fortran"])
def test_k_split_operand_layouts(layout, threads):
    a, b = rand((2 * 66, 2 * 2503), np.float64), rand((2503, 70), np.float64)
    if layout == "strided":
        x, y = a[::2, ::2], b
    elif layout == "negative":
        x, y = a[::-2, ::-2], b[::-1]
    else:
        x, y = np.asfortranarray(a[::2, ::2]), np.asfortranarray(b)
    assert uses_k_split("ik,kj->ij", x, y)
    assert_matches(einc.einsum("ik,kj->ij", x, y), "ik,kj->ij", x, y, terms=2503)


@pytest.mark.parametrize("order", ["F", "strided", "transposed"])
def test_k_split_into_a_non_contiguous_out(order, threads):
    """C's offsets are not the partials' compact ones: the sum scatters through them."""
    a, b = rand((60, 4000), np.float32), rand((4000, 70), np.float32)
    if order == "F":
        out = np.zeros((60, 70), np.float32, order="F")
    elif order == "strided":
        out = np.zeros((120, 140), np.float32)[::2, ::2]
    else:
        out = np.zeros((70, 60), np.float32).T
    r = einc.einsum("ik,kj->ij", a, b, out=out)
    assert r is out or np.shares_memory(r, out)
    assert_matches(out, "ik,kj->ij", a, b, terms=4000)


def test_not_taken_where_it_must_not_be(monkeypatch):
    monkeypatch.setattr(execute, "_POOL", None)
    a, b = rand((64, 4000), np.float64), rand((4000, 64), np.float64)
    ints = (a * 10).astype(np.int16), (b * 10).astype(np.int16)
    assert not uses_k_split("ik,kj->ij", *ints)  # integer C: stored truncated
    assert_matches(einc.einsum("ik,kj->ij", *ints), "ik,kj->ij", *ints)
    big = rand((600, 3000), np.float32), rand((3000, 600), np.float32)
    assert not uses_k_split("ik,kj->ij", *big)  # K < 4 N
    monkeypatch.setenv("EINC_NUM_THREADS", "1")
    assert not uses_k_split("ik,kj->ij", a, b)  # one thread: nothing to split over
    assert_matches(einc.einsum("ik,kj->ij", a, b), "ik,kj->ij", a, b, terms=4000)
    monkeypatch.setattr(execute, "_POOL", None)


def test_k_split_special_values(threads):
    """A NaN in one thread's K range and an inf in another's reach C as numpy's do."""
    a, b = rand((40, 3000), np.float64), rand((3000, 50), np.float64)
    a[3, 10] = np.nan
    a[7, 2900] = np.inf
    b[2900, :] = 1.0
    got = einc.einsum("ik,kj->ij", a, b)
    ref = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(ref))


# ------------------------------------------------------- execute._split: parts claimed by whoever is free
def test_split_runs_every_part_once_and_reraises(threads):
    seen = []
    execute._split(lambda ptrs, i: seen.append(i), None, [(i,) for i in range(37)])
    assert sorted(seen) == list(range(37))
    execute._split(lambda ptrs, i: seen.append(i), None, [])  # nothing to do, nothing to wait for

    def bad(ptrs, i):
        if i == 5:
            raise ValueError("part 5")
    with pytest.raises(ValueError, match="part 5"):
        execute._split(bad, None, [(i,) for i in range(9)])


def test_split_does_not_wait_for_a_busy_pool(threads):
    """Every pool thread blocked: the caller runs all parts itself and returns."""
    import threading
    release = threading.Event()
    pool = execute._pool()
    blockers = [pool.submit(release.wait, 30) for _ in range(threads)]
    try:
        seen = []
        execute._split(lambda ptrs, i: seen.append(threading.get_ident()), None, [(i,) for i in range(6)])
        assert seen == [threading.get_ident()] * 6
    finally:
        release.set()
        for f in blockers:
            f.result(30)
