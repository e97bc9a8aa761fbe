"""The CUDA backend against numpy: the differential suite again, on the GPU (marked gpu)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import einc
from oracle import assert_matches
from test_differential import DTYPES, check_random_case, einsums, make_array

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsums())
def test_random_einsums_on_gpu(case):
    check_random_case(case, "cuda")


RAGGED = [(31, 33, 17), (63, 65, 33), (1, 1, 1), (129, 7, 300), (5, 200, 0)]


@pytest.mark.parametrize("m,n,k", RAGGED)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "int64"])
@pytest.mark.parametrize("strategy", ["gett", "reduce", "generic"])
def test_ragged_gemm_poisoned_output(torch, m, n, k, dtype, strategy):
    rng = np.random.default_rng(m + n + k)
    a = make_array(rng, (m, k), dtype, 0)
    b = make_array(rng, (k, n), dtype, 0)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    out = torch.full((m, n), float("nan") if np.dtype(dtype).kind == "f" else -7,
                     dtype=ta.dtype, device="cuda")
    r = einc.einsum("ij,jk->ik", ta, tb, out=out, strategy=strategy)
    assert r is out
    assert_matches(out.cpu().numpy(), "ij,jk->ik", a, b, terms=max(k, 1))


@pytest.mark.parametrize("subscripts,shapes", [
    ("bij,bjk->bik", [(0, 3, 4), (0, 4, 5)]),       # zero-size batch
    ("ij,jk->ik", [(0, 4), (4, 5)]),                # M = 0
    ("ij,jk->ik", [(3, 0), (0, 5)]),                # K = 0
    ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)]),  # broadcasting
    ("ii->i", [(7, 7)]), ("ii->", [(300, 300)]), ("iij->j", [(4, 4, 5)]),  # diagonals
    ("ij,ij->i", [(1000, 333), (1000, 333)]), ("ij->j", [(513, 1000)]), ("ij->ji", [(300, 500)]),
    ("ij,ij->ij", [(100, 77), (100, 77)]), ("i,j->ij", [(100,), (33,)]),
    ("abcd,dbea->ec", [(7, 9, 11, 13), (13, 9, 5, 7)]),
    ("ijk,jkl->il", [(31, 33, 17), (33, 17, 19)]),
    ("ij,jk,kl->il", [(30, 40), (40, 50), (50, 20)]),
    (",ij->ij", [(), (3, 4)]),
    ("ij,jk->ik", [(64, 8192), (8192, 64)]),          # split-K: 32 K slices + a reduce step
    ("lki,kjl->ji", [(64, 64, 200), (64, 150, 64)]),  # split-K over a multi-mode K group
    ("i,i->", [(1 << 18,), (1 << 18,)]),             # a long dot: split into partial sums
    ("ij->j", [(1 << 17, 3)]),
])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fixed_cases_every_dtype(torch, subscripts, shapes, dtype):
    rng = np.random.default_rng(len(subscripts))
    ops = [make_array(rng, s, dtype, 0) for s in shapes]
    assert_matches(einc.einsum(subscripts, *ops, backend="cuda"), subscripts, *ops, terms=1024)


def test_torch_in_torch_out_noncontiguous(torch):
    a = torch.randn(64, 80, device="cuda", dtype=torch.float64)[::2, 1::2]
    b = torch.randn(96, 40, device="cuda", dtype=torch.float64).t()[:, ::3]
    r = einc.einsum("ij,jk->ik", a, b)
    assert isinstance(r, torch.Tensor) and r.device.type == "cuda"
    np.testing.assert_allclose(r.cpu().numpy(), (a @ b).cpu().numpy(), rtol=1e-10, atol=1e-10)


def test_int8_matmul_on_gpu_wraps_like_numpy(torch):
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (130, 257)).astype(np.int8)
    b = rng.integers(-128, 128, (257, 66)).astype(np.int8)
    r = einc.einsum("ij,jk->ik", torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda())
    np.testing.assert_array_equal(r.cpu().numpy(), np.einsum("ij,jk->ik", a, b))


def test_cupy_in_cupy_out():
    cupy = pytest.importorskip("cupy")
    a = cupy.random.rand(50, 60)
    b = cupy.random.rand(60, 70)
    r = einc.einsum("ij,jk->ik", a, b)
    assert isinstance(r, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(r), cupy.asnumpy(a @ b), rtol=1e-10)


def test_caller_stream_is_used(torch):
    s = torch.cuda.Stream()
    a = torch.randn(512, 512, device="cuda")
    with torch.cuda.stream(s):
        b = a * 2  # produced on s
        r = einc.einsum("ij,jk->ik", b, b)  # must run on s, after b
    s.synchronize()
    np.testing.assert_allclose(r.cpu().numpy(), (b @ b).cpu().numpy(), rtol=1e-3, atol=1e-2)


def test_disk_cache_second_process(tmp_path):
    import os, subprocess, sys, textwrap
    code = textwrap.dedent("""
        import numpy as np, einc
        from einc.runtime.cuda import runtime
        einc.einsum("ij,jk->ik", np.ones((70, 80), np.float32), np.ones((80, 90), np.float32), backend="cuda")
        print(runtime().stats.compiled, runtime().stats.disk_hits)
    """)
    env = dict(os.environ, EINC_CACHE_DIR=str(tmp_path))
    run = lambda: list(map(int, subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                               text=True, check=True).stdout.split()))
    first, second = run(), run()
    assert first[0] >= 1
    assert second[0] == 0 and second[1] >= 1  # the second process loads cubins from disk


class _DLPackOnly:
    """A producer that speaks only DLPack (as JAX arrays do)."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, stream=None):
        return self._t.__dlpack__()

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


def test_dlpack_only_operands(torch):
    a = torch.randn(40, 50, device="cuda", dtype=torch.float64)[:, ::2]
    b = torch.randn(25, 30, device="cuda", dtype=torch.float64)
    r = einc.einsum("ij,jk->ik", _DLPackOnly(a), _DLPackOnly(b))
    got = r.cpu().numpy() if hasattr(r, "cpu") else __import__("cupy").asnumpy(r)
    np.testing.assert_allclose(got, (a @ b).cpu().numpy(), rtol=1e-10, atol=1e-10)


def test_cupy_strided_operands():
    cupy = pytest.importorskip("cupy")
    a = cupy.random.rand(60, 80)[::2, 1::3]
    b = cupy.random.rand(27, 40).T
    r = einc.einsum("ij,kj->ik", a, b)
    np.testing.assert_allclose(cupy.asnumpy(r), cupy.asnumpy(a @ b.T), rtol=1e-10)


def test_sync_mode_runs_and_names_steps(tmp_path):
    import os, subprocess, sys, textwrap
    code = textwrap.dedent("""
        import numpy as np, einc
        a = np.random.rand(30, 40); b = np.random.rand(40, 50); c = np.random.rand(50, 20)
        r = einc.einsum("ij,jk,kl->il", a, b, c, backend="cuda")
        assert np.allclose(r, a @ b @ c)
        print("ok")
    """)
    env = dict(os.environ, EINC_CUDA_SYNC="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("shapes,dtype", [
    ([(84, 96), (20, 20, 96, 96)], "float32"),  # TCCG ao2mo's layout: tabled N, K-fast A, N-fast B
    ([(70, 37), (19, 20, 37, 93)], "float32"),  # ragged M, N and K
    ([(84, 96), (20, 20, 96, 96)], "int32"),
])
def test_the_96_wide_gett_tile_matches_numpy(shapes, dtype):
    from einc.api import plan_for
    from einc.codegen.cuda.emit import emit_step
    from oracle import summed_terms
    from test_cuda_codegen import make
    subs = "bq,srqa->srba"
    p = plan_for(subs, shapes, dtype, backend="cuda")
    assert "gett 96x96x8 tiles" in emit_step(p, p.steps[0]).source  # the model's own pick here
    ops = [make(np.random.default_rng(9), s, dtype) for s in shapes]
    assert_matches(einc.einsum(subs, *ops, backend="cuda"), subs, *ops, terms=summed_terms(subs, shapes))


def test_a_tiny_k_fast_operand_copied_for_the_96_wide_tile_matches_numpy():
    from einc.api import plan_for
    from oracle import summed_terms
    from test_cuda_codegen import make
    subs, shapes = "ap,srqp->srqa", [(96, 96), (84, 84, 20, 96)]  # 2.6 GFLOP: the copy pays
    p = plan_for(subs, shapes, "float32", backend="cuda")
    assert p.steps[0].text == "ap->pa" and dict(p.steps[1].config).get("tile") == "96x96x8"
    ops = [make(np.random.default_rng(10), s, "float32") for s in shapes]
    assert_matches(einc.einsum(subs, *ops, backend="cuda"), subs, *ops, terms=summed_terms(subs, shapes))
