"""The on-disk kernel cache under stress: bad entries, unwritable or full directories, and
several processes filling one cache at once (CPU backend and the NVRTC compile path).

A "new process" in most tests is a new CpuJit (its own MCJIT engine and DiskCache) over
the same $EINC_CACHE_DIR, swapped in for the process-wide one; the multi-process test
uses real spawned processes.
"""
from __future__ import annotations

import errno
import hashlib
import multiprocessing as mp
import os
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import einc
import einc.api as api
from einc.runtime import cache as cache_mod
from einc.runtime import cpu
from einc.runtime.cache import MAGIC, TMP_PREFIX, DiskCache
from einc.runtime.cuda import compile_cubin

_KEEP = []  # engines swapped in by tests: their code must outlive any pointer to it


def _workload(rng, with_gemm=False):
    """A few einsums with distinct kernels, each checked against numpy (the oracle)."""
    a, b = rng.standard_normal((50, 30)), rng.standard_normal((50, 30))
    c = rng.standard_normal((3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(einc.einsum("ij,ij->i", a, b), np.einsum("ij,ij->i", a, b), rtol=1e-12)
    np.testing.assert_allclose(einc.einsum("ii->", a[:30]), np.trace(a[:30]), rtol=1e-12)
    np.testing.assert_allclose(einc.einsum("ijk->k", c), c.astype(np.float64).sum((0, 1)), rtol=1e-5)
    if with_gemm:
        x, y = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
        np.testing.assert_allclose(einc.einsum("ij,jk->ik", x, y), x @ y, rtol=1e-10, atol=1e-12)


@pytest.fixture
def new_process(tmp_path, monkeypatch):
    """Returns make(): a fresh CPU JIT over tmp_path as the cache, as a new process has."""
    monkeypatch.setenv("EINC_CACHE_DIR", str(tmp_path))

    def make():
        j = cpu.CpuJit()
        _KEEP.append(j)
        monkeypatch.setattr(cpu, "_JIT", j)
        api._EXECUTABLES.clear()
        api._FAST.clear()
        return j
    yield make
    api._EXECUTABLES.clear()  # executables point into the swapped-in engines
    api._FAST.clear()


def _entries(root: Path):
    return sorted(p for p in root.iterdir() if not p.name.startswith(TMP_PREFIX))


def _stray_temps(root: Path):
    return [p for p in root.rglob(f"{TMP_PREFIX}*")]


def _einc_warnings(record):
    return [w for w in record if "einc: cache directory" in str(w.message)]


def _corrupt(kind: str, path: Path, other: Path, key: str):
    blob = path.read_bytes()
    payload = blob[len(MAGIC) + 32:]
    if kind == "truncated":
        path.write_bytes(blob[: len(blob) // 2])
    elif kind == "truncated_header":
        path.write_bytes(blob[: len(MAGIC) + 7])
    elif kind == "flipped":
        mid = len(MAGIC) + 32 + len(payload) // 2
        path.write_bytes(blob[:mid] + bytes([blob[mid] ^ 0x10]) + blob[mid + 1:])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "random":
        path.write_bytes(np.random.default_rng(7).bytes(len(blob)))
    elif kind == "old_format":  # a valid-looking header of another format: EINC1, sha256(payload)
        path.write_bytes(b"EINC1\0" + hashlib.sha256(payload).digest() + payload)
    elif kind == "other_key":  # another key's whole, valid entry copied over this one
        path.write_bytes(other.read_bytes())
    elif kind == "directory":
        path.unlink()
        path.mkdir()
    elif kind == "nonempty_directory":
        path.unlink()
        path.mkdir()
        (path / "foreign").write_text("not ours")
    else:
        raise AssertionError(kind)


KINDS = ["truncated", "truncated_header", "flipped", "empty", "random", "old_format", "other_key",
         "directory", "nonempty_directory"]


@pytest.mark.parametrize("kind", KINDS)
def test_bad_cpu_entries_are_recompiled(new_process, tmp_path, kind):
    rng = np.random.default_rng(0)
    first = new_process()
    _workload(rng)
    root = tmp_path / "cpu"
    entries = _entries(root)
    assert first.stats.compiled == len(entries) >= 3
    for i, p in enumerate(entries):
        _corrupt(kind, p, entries[(i + 1) % len(entries)], p.name)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        second = new_process()
        _workload(rng)  # correct results: nothing bad was trusted
    assert not _einc_warnings(record)  # one bad entry never disables the cache
    assert second.stats.disk_hits == 0 and second.stats.compiled == len(entries)
    squatted = kind == "nonempty_directory"
    for p in entries:  # rewritten whole, except where a foreign directory squats
        assert (DiskCache("cpu", root=tmp_path).read(p.name) is None) == squatted
    third = new_process()
    _workload(rng)
    assert third.stats.compiled == (len(entries) if squatted else 0)
    assert not _stray_temps(tmp_path)


def test_bad_gemm_object_code_is_recompiled(new_process, tmp_path):
    rng = np.random.default_rng(1)
    new_process()
    _workload(rng, with_gemm=True)
    for p in _entries(tmp_path / "cpu"):
        _corrupt("flipped", p, p, p.name)
    again = new_process()
    _workload(rng, with_gemm=True)
    assert again.stats.disk_hits == 0 and again.stats.compiled >= 4


TINY_CU = 'extern "C" __global__ void einc_tiny(float *x) { x[threadIdx.x] *= 2.0f; }\n'
OPTS = {"arch": "sm_90", "std": "c++17"}


class _Stats:
    compiled = disk_hits = 0


@pytest.mark.parametrize("kind", KINDS)
def test_bad_cubin_entries_are_recompiled(tmp_path, kind):
    disk = DiskCache("cuda", root=tmp_path)
    stats = _Stats()
    fresh = compile_cubin(TINY_CU, "einc_tiny", OPTS, disk, stats)
    other = compile_cubin(TINY_CU + "// another key\n", "einc_tiny", OPTS, disk, stats)
    assert fresh[:4] == b"\x7fELF" and stats.compiled == 2
    entries = _entries(tmp_path / "cuda")
    assert len(entries) == 2
    for i, p in enumerate(entries):
        _corrupt(kind, p, entries[1 - i], p.name)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert compile_cubin(TINY_CU, "einc_tiny", OPTS, disk, stats) == fresh
    assert not _einc_warnings(record)
    assert stats.compiled == 3 and stats.disk_hits == 0
    assert compile_cubin(TINY_CU, "einc_tiny", OPTS, disk, stats) == fresh
    assert stats.disk_hits == (0 if kind == "nonempty_directory" else 1)
    assert not _stray_temps(tmp_path)


def _is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _read_only(how, root: Path, monkeypatch):
    """Make writes under ``root`` fail as on a read-only directory."""
    if how == "chmod":
        if _is_root():  # root writes through 0o555: refuse the temporary file as the OS would
            def refuse(*a, **k):
                raise PermissionError(errno.EACCES, "Permission denied", str(root))
            monkeypatch.setattr(cache_mod.tempfile, "mkstemp", refuse)
        else:
            for d in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
                d.chmod(0o555)
    elif how == "full":
        def full(fd, data):
            os.write(fd, data[: len(data) // 2])
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        monkeypatch.setattr(cache_mod, "_write_file", full)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how,reason", [("chmod", "not writable"), ("full", "full")])
def test_unwritable_cache_warns_once_and_keeps_working(new_process, tmp_path, monkeypatch, how, reason):
    rng = np.random.default_rng(2)
    new_process()
    _workload(rng)  # a populated cache first: it stays readable
    before = {p.name: p.read_bytes() for p in _entries(tmp_path / "cpu")}
    _read_only(how, tmp_path / "cpu", monkeypatch)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            j = new_process()
            _workload(rng)
            assert j.stats.disk_hits == len(before) and j.stats.compiled == 0  # still read
            for n in range(3, 9):  # new kernels: compiled, kept in memory, not written
                x = rng.standard_normal((n, n + 1, 2))
                np.testing.assert_allclose(einc.einsum("ijk->ki", x), x.sum(1).T, rtol=1e-12)
                np.testing.assert_allclose(einc.einsum("ijk,ijk->j", x, x), (x * x).sum((0, 2)), rtol=1e-12)
            compiled = j.stats.compiled
            for n in range(3, 9):  # and the in-memory cache serves them again
                einc.einsum("ijk,ijk->j", *(np.ones((n, n + 1, 2)),) * 2)
            assert j.stats.compiled == compiled > 0
        got = _einc_warnings(record)
        assert len(got) == 1 and reason in str(got[0].message)
        assert j.disk.warnings == 1 and not j.disk.writable
    finally:
        for d in [tmp_path / "cpu", *[p for p in (tmp_path / "cpu").rglob("*") if p.is_dir()]]:
            d.chmod(0o755)
    assert {p.name: p.read_bytes() for p in _entries(tmp_path / "cpu")} == before
    assert not _stray_temps(tmp_path)


def test_cache_under_a_regular_file_warns_once(tmp_path):
    """mkdir fails even for root here: the cache's parent is a file."""
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a directory")
    disk, stats = DiskCache("cuda", root=blocker), _Stats()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for n in range(3):
            src = TINY_CU + f"// {n}\n"
            assert compile_cubin(src, "einc_tiny", OPTS, disk, stats)[:4] == b"\x7fELF"
    assert len(_einc_warnings(record)) == 1 and stats.compiled == 3


def test_threads_hitting_a_full_cache_warn_once(tmp_path, monkeypatch):
    _read_only("full", tmp_path, monkeypatch)
    disk = DiskCache("cpu", root=tmp_path)
    go = threading.Barrier(8)

    def writer(i):
        go.wait()
        for k in range(20):
            disk.write(f"k{i}-{k}", b"x" * 1000)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
    assert len(_einc_warnings(record)) == 1 and disk.warnings == 1
    assert not _stray_temps(tmp_path)


# --- several processes, one fresh cache ------------------------------------------------

def _child(cache, barrier, queue):
    """One spawned process: compile the same kernels as its siblings, at the same moment."""
    os.environ["EINC_CACHE_DIR"] = cache
    try:
        import numpy as np
        import einc
        from einc.api import plan_for
        from einc.codegen.cuda.emit import compile_options, emit_step
        from einc.runtime.cache import DiskCache
        from einc.runtime.cpu import jit
        from einc.runtime.cuda import compile_cubin
        rng = np.random.default_rng(os.getpid())
        plan = plan_for("ij,ij->i", [(16, 8), (16, 8)], "float32", backend="cuda")
        kernel = emit_step(plan, plan.steps[0], "sm_90")
        barrier.wait(120)
        ok = True
        for _ in range(3):
            a, b = rng.standard_normal((40, 24)), rng.standard_normal((24, 16))
            ok &= np.allclose(einc.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-10)
            ok &= np.allclose(einc.einsum("ij,ij->i", a, a), (a * a).sum(1), rtol=1e-12)
            ok &= np.allclose(einc.einsum("ij->j", b), b.sum(0), rtol=1e-12)
        cubin = compile_cubin(kernel.source, kernel.name, compile_options("sm_90"), DiskCache("cuda"))
        queue.put((bool(ok), sorted(jit()._modules.values()), cubin[:4] == b"\x7fELF",
                   jit().stats.compiled, jit().stats.disk_hits))
    except BaseException as e:  # the parent reports it
        queue.put(repr(e))


PROCESSES = 6


def test_processes_filling_one_cache_leave_one_valid_entry_per_key(tmp_path):
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_child, args=(str(tmp_path), barrier, queue), daemon=True)
             for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(60)
    assert all(not isinstance(r, str) for r in results), results
    assert all(ok and elf for ok, _, elf, _, _ in results)
    keys = {k for _, ks, _, _, _ in results for k in ks}
    assert all(set(ks) == keys for _, ks, _, _, _ in results)  # every process wanted the same keys
    assert sum(c for *_, c, _ in results) >= len(keys)  # each key was compiled at least once
    cpu_files = sorted(p.name for p in (tmp_path / "cpu").iterdir())
    assert cpu_files == sorted(keys)  # exactly one entry per key, nothing else
    cuda_files = list((tmp_path / "cuda").iterdir())
    assert len(cuda_files) == 1
    assert all(DiskCache("cpu", root=tmp_path).read(k) is not None for k in keys)
    assert DiskCache("cuda", root=tmp_path).read(cuda_files[0].name)[:4] == b"\x7fELF"
    assert not _stray_temps(tmp_path)
