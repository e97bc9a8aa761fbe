"""einc.einsum from many threads at once (CPU backend): right answers, no deadlock.

Threads are daemons joined with a deadline, so a deadlock fails the test instead of
hanging the run. Every result is checked against numpy.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import einc
import einc.api as api
from einc.runtime import cpu
from oracle import assert_matches

THREADS, CALLS = 8, 50
DEADLINE = 240  # seconds for a whole test; a healthy run takes a few


def run_threads(target, n=THREADS, deadline=DEADLINE):
    """Start ``n`` threads on ``target(i)`` at the same moment; re-raise the first error."""
    go = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            go.wait(60)
            target(i)
        except BaseException as e:  # reported below, with the thread's number
            errors.append((i, e))
    threads = [threading.Thread(target=body, args=(i,), daemon=True, name=f"t{i}") for i in range(n)]
    for t in threads:
        t.start()
    end = time.monotonic() + deadline
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"threads {alive} still running after {deadline} s: deadlock or hang"
    if errors:
        i, e = errors[0]
        raise AssertionError(f"thread {i} failed ({len(errors)} failures in all): {e!r}") from e


def _cases(rng):
    """(subscripts, operands, keyword arguments): small and large, every kernel family,
    views, out= and dtype=, steps split over the thread pool."""
    f64 = lambda *s: rng.standard_normal(s)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    i8 = lambda *s: rng.integers(-5, 6, s).astype(np.int8)
    n = int(rng.integers(5, 40))
    return [
        ("ij,jk->ik", (f64(n, 30), f64(30, 7)), {}),
        ("ij,jk->ik", (f32(160, 128), f32(128, 144)), {}),          # gett, split over the pool
        ("bij,bjk->bik", (f64(3, n, 9), f64(3, 9, 11)), {}),
        ("ij,ij->i", (f64(n, 64), f64(n, 64)), {}),
        ("ij->i", (f64(1100, 1000),), {}),                            # loop nest over the pool
        ("ii->i", (f64(n, n),), {}),                                  # a view
        ("ij->ji", (f64(n, 3),), {}),                                 # a view
        ("ijk->k", (f32(4, n, 6),), {"dtype": np.float64}),
        ("ij,jk,kl->il", (f64(n, 8), f64(8, 9), f64(9, 5)), {}),
        ("ij,jk->ik", (i8(70, 64), i8(64, 66)), {"dtype": np.int32}),  # integer gett
        ("i,j->ij", (f64(n), f64(7)), {"out": np.empty((n, 7))}),
        ("ijk,jkl->il", (f64(6, 5, 4), f64(5, 4, n)), {"optimize": False}),
    ]


def _check(sub, ops, kw, got):
    dtype = kw.get("dtype")
    if dtype is not None:  # numpy.einsum(dtype=) casts the operands first (int8 -> int32: no wrap)
        ops = [np.asarray(o).astype(dtype) for o in ops]
    assert_matches(got, sub, *ops, terms=1024)


def test_many_threads_mixed_calls():
    done = [0] * THREADS

    def work(i):
        rng = np.random.default_rng(100 + i)
        for c in range(CALLS):
            cases = _cases(rng)
            sub, ops, kw = cases[(c + i) % len(cases)]
            _check(sub, ops, kw, einc.einsum(sub, *ops, **kw))
            done[i] += 1
    run_threads(work)
    assert done == [CALLS] * THREADS


def test_threads_share_one_contract_expression():
    expr = einc.contract_expression("ij,jk,kl->il", (40, 30), (30, 20), (20, 10))
    big = einc.contract_expression("ij,jk->ik", (200, 160), (160, 192))  # gett over the pool

    def work(i):
        rng = np.random.default_rng(200 + i)
        for c in range(CALLS):
            if c % 2:
                ops = (rng.standard_normal((40, 30)), rng.standard_normal((30, 20)), rng.standard_normal((20, 10)))
                _check("ij,jk,kl->il", ops, {}, expr(*ops))
            else:
                ops = (rng.standard_normal((200, 160)), rng.standard_normal((160, 192)))
                _check("ij,jk->ik", ops, {}, big(*ops))
    run_threads(work)


@pytest.fixture
def fresh_jit(monkeypatch, tmp_path):
    """A new, empty CPU JIT and executable caches: every kernel is compiled for the first time."""
    monkeypatch.setenv("EINC_CACHE_DIR", str(tmp_path))  # nothing on disk either
    j = cpu.CpuJit()
    _KEEP.append(j)
    monkeypatch.setattr(cpu, "_JIT", j)
    api._EXECUTABLES.clear()
    api._FAST.clear()
    yield j
    api._EXECUTABLES.clear()
    api._FAST.clear()


_KEEP = []  # swapped-in engines outlive any pointer into their code


def test_threads_compile_the_same_new_expressions_at_once(fresh_jit):
    shapes = [((17, 23), (23, 19)), ((64, 64), (64, 64)), ((5, 130), (130, 3))]
    exprs = {}
    lock = threading.Lock()

    def work(i):
        rng = np.random.default_rng(300 + i)
        for c in range(CALLS // 5):
            for sa, sb in shapes:
                a, b = rng.standard_normal(sa), rng.standard_normal(sb)
                _check("ij,jk->ik", (a, b), {}, einc.einsum("ij,jk->ik", a, b))
                _check("ij,kj->ik", (a, b.T.copy()), {}, einc.einsum("ij,kj->ik", a, b.T.copy()))
            if c == 0:  # every thread builds its own expression of one new structure at once
                e = einc.contract_expression("abc,cd->abd", (3, 4, 5), (5, 6))
                with lock:
                    exprs[i] = e
            x, y = rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 6))
            _check("abc,cd->abd", (x, y), {}, exprs[i](x, y))
    run_threads(work)
    # each structural kernel was built and compiled once, however many threads wanted it
    assert fresh_jit.stats.ir_built == len(fresh_jit._by_key) == fresh_jit.stats.compiled
    assert fresh_jit.stats.ir_built >= 2


def test_thread_pool_under_contention_from_many_callers():
    """Steps that fan out over einc's pool, called from more threads than it has workers."""
    def work(i):
        rng = np.random.default_rng(400 + i)
        for _ in range(10):
            a, b = rng.standard_normal((256, 200)).astype(np.float32), rng.standard_normal((200, 256)).astype(np.float32)
            _check("ij,jk->ik", (a, b), {}, einc.einsum("ij,jk->ik", a, b))
            x = rng.standard_normal((2048, 600))
            _check("ij->i", (x,), {}, einc.einsum("ij->i", x))
    run_threads(work, n=2 * THREADS)


def test_einsum_inside_a_callers_thread_pool():
    from concurrent.futures import ThreadPoolExecutor, wait
    rng = np.random.default_rng(5)
    ops = [(rng.standard_normal((300, 200)), rng.standard_normal((200, 300))) for _ in range(32)]
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(einc.einsum, "ij,jk->ik", a, b) for a, b in ops]
        finished, pending = wait(futures, timeout=DEADLINE)
        assert not pending, "einsum calls from a caller's pool did not finish: deadlock"
    for (a, b), f in zip(ops, futures):
        _check("ij,jk->ik", (a, b), {}, f.result())


def _forked_child(q):
    try:
        rng = np.random.default_rng(9)
        a, b = rng.standard_normal((256, 200)).astype(np.float32), rng.standard_normal((200, 256)).astype(np.float32)
        x = rng.standard_normal((2048, 600))
        y = rng.standard_normal((7, 5, 3))
        q.put([np.allclose(einc.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-4, atol=1e-4),  # over the pool
               np.allclose(einc.einsum("ij->i", x), x.sum(1)),
               np.allclose(einc.einsum("ijk->kj", y), y.sum(0).T)])  # a kernel new to the child
    except BaseException as e:
        q.put(repr(e))


def _fork_and_check():
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_forked_child, args=(q,), daemon=True)
    p.start()
    try:
        got = q.get(timeout=60)
    except Exception:
        p.kill()
        raise AssertionError("einsum in a forked child did not finish: its thread pool or "
                             "JIT lock came from the parent") from None
    p.join(30)
    assert got == [True, True, True], got


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork()")
def test_forked_child_after_the_pool_started():
    a = np.ones((256, 256), np.float32)
    einc.einsum("ij,jk->ik", a, a)  # the pool exists now, with its threads
    _fork_and_check()


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork()")
def test_fork_while_another_thread_compiles(fresh_jit):
    a = np.ones((96, 96), np.float32)
    started = threading.Event()

    def compile_gemm():
        started.set()
        einc.einsum("ij,jk->ik", a, a)  # a new engine: ~0.5 s of compiling under its lock
    t = threading.Thread(target=compile_gemm, daemon=True)
    t.start()
    started.wait(10)
    time.sleep(0.05)
    _fork_and_check()
    t.join(DEADLINE)
    assert not t.is_alive()
