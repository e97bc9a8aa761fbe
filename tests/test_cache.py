"""Kernels specialise on structure, not sizes; compiled code is cached on disk."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import einc
from einc.runtime.cache import DiskCache
from einc.runtime.cpu import jit


def test_fifty_shapes_compile_a_handful_of_kernels():
    rng = np.random.default_rng(0)
    before = jit().stats.ir_built
    for n in range(2, 52):
        a, b = rng.standard_normal((n, n + 1)), rng.standard_normal((n + 1, 3))
        np.testing.assert_allclose(einc.einsum("ij,jk->ik", a, b, strategy="reduce"), a @ b, rtol=1e-10)
        x = rng.standard_normal((n, 4))
        np.testing.assert_allclose(einc.einsum("ij->j", x), x.sum(0), rtol=1e-10)
    assert jit().stats.ir_built - before <= 6


def test_repeated_call_builds_nothing():
    a = np.ones((5, 6))
    einc.einsum("ij,ij->i", a, a)
    before = (jit().stats.ir_built, jit().stats.compiled)
    for _ in range(10):
        einc.einsum("ij,ij->i", a, a)
    assert (jit().stats.ir_built, jit().stats.compiled) == before


def test_contract_expression_reuses_its_plan():
    expr = einc.contract_expression("ij,jk->ik", (8, 8), (8, 8))
    before = jit().stats.ir_built
    a = np.arange(64.0).reshape(8, 8)
    for _ in range(5):
        np.testing.assert_allclose(expr(a, a), a @ a)
    assert jit().stats.ir_built == before and len(expr._cache) == 1


def test_second_process_pays_no_compile(tmp_path):
    code = textwrap.dedent("""
        import numpy as np, einc
        from einc.runtime.cpu import jit
        a = np.ones((7, 9)); b = np.ones((9, 4), dtype=np.float32)
        einc.einsum("ij,jk->ik", a, b); einc.einsum("ii->", np.ones((5, 5)))
        print(jit().stats.compiled, jit().stats.disk_hits)
    """)
    env = dict(os.environ, EINC_CACHE_DIR=str(tmp_path))
    run = lambda: subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True).stdout.split()
    compiled, hits = map(int, run())
    assert compiled >= 2 and hits == 0
    compiled, hits = map(int, run())
    assert compiled == 0 and hits >= 2


def test_corrupt_cache_entry_is_recompiled(tmp_path):
    cache = DiskCache("cpu", root=tmp_path)
    cache.write("k", b"object code")
    assert cache.read("k") == b"object code"
    path = tmp_path / "cpu" / "k"
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0xFF
    path.write_bytes(bytes(blob))
    assert cache.read("k") is None  # a flipped bit is a miss, never trusted
    path.write_bytes(b"EINC1")  # truncated
    assert cache.read("k") is None


def test_unwritable_cache_dir_degrades_to_memory(tmp_path):
    target = tmp_path / "file"
    target.write_text("not a directory")
    cache = DiskCache("cpu", root=target)
    import pytest
    with pytest.warns(RuntimeWarning, match="not writable"):
        cache.write("k", b"x")
    assert cache.read("k") is None
