"""einc inside JAX (einc/jax.py, einc/jax_ffi.py, einc/jax_ffi.c): forward against numpy,
jax.jit, jax.grad and jax.test_util.check_grads (orders 1 and 2) in float64 and complex128
-- repeated labels, broadcasting, ellipsis, private labels, several operands -- vmap,
changing shapes under jit, on both CPU paths (jax.pure_callback, and the XLA FFI shim
registered for the host). GPU tests (the FFI target on XLA's CUDA stream) are marked gpu."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import einc.jax as ej  # noqa: E402
import einc.jax_ffi as jf  # noqa: E402

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii->", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji,j->ij", [(3, 2, 3), (2,)]),                 # a repeated label around another
    ("i,i->", [(5,), (5,)]),
    ("ij->ji", [(3, 4)]),
    ("ij,k->i", [(3, 4), (2,)]),                       # k private to operand 1: summed
    ("ij,ij->ij", [(3, 1), (3, 4)]),                  # broadcasting a size-1 axis
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # ellipsis, broadcast batch
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ab,bc,cd,da->", [(2, 3), (3, 4), (4, 2), (2, 2)]),
]
IDS = [c[0] for c in CASES]
PATHS = ["callback", "ffi"]


@pytest.fixture(autouse=True)
def _on_the_cpu_unless_gpu(request):
    """Tests not marked gpu run on JAX's CPU device, on a GPU machine too."""
    if request.node.get_closest_marker("gpu"):
        yield
        return
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def _rand(shape, dtype, seed):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * r.standard_normal(shape)
    return x.astype(dtype)


def _ops(shapes, dtype=np.float64, seed=0):
    return [_rand(s, dtype, seed + i) for i, s in enumerate(shapes)]


def _close(got, want, tol=1e-10):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("cpu", PATHS)
@pytest.mark.parametrize("eq,shapes", CASES, ids=IDS)
def test_forward_and_jit_match_numpy(eq, shapes, cpu):
    ops = _ops(shapes)
    want = np.einsum(eq, *ops, optimize=True)
    _close(ej.einsum(eq, *ops, cpu=cpu), want)
    _close(jax.jit(lambda *x: ej.einsum(eq, *x, cpu=cpu))(*ops), want)


@pytest.mark.parametrize("cpu", PATHS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["float64", "complex128"])
@pytest.mark.parametrize("eq,shapes", CASES, ids=IDS)
def test_grads_match_jnp_einsum_and_check_grads(eq, shapes, dtype, cpu):
    ops = _ops(shapes, dtype, seed=10)
    ct = _rand(np.shape(np.einsum(eq, *ops, optimize=True)), dtype, 99)
    _, vjp = jax.vjp(lambda *x: ej.einsum(eq, *x, cpu=cpu), *ops)
    _, ref = jax.vjp(lambda *x: jnp.einsum(eq, *x), *ops)
    for g, r in zip(jax.jit(vjp)(ct), ref(ct)):
        _close(g, r)
    # numerical checks: second order on the default path, first on the FFI one (same VJP)
    check_grads(lambda *x: ej.einsum(eq, *x, cpu=cpu), ops, order=2 if cpu == "callback" else 1,
                modes=["rev"])


@pytest.mark.parametrize("cpu", PATHS)
def test_jax_grad_of_a_real_loss(cpu):
    a, b = _ops([(3, 4), (4, 4)])
    loss = lambda f: (lambda a, b: (f("ij,jj->i", a, b) ** 2).sum())
    ga = jax.jit(jax.grad(loss(lambda *x: ej.einsum(*x, cpu=cpu)), argnums=(0, 1)))(a, b)
    gr = jax.grad(loss(jnp.einsum), argnums=(0, 1))(a, b)
    for x, y in zip(ga, gr):
        _close(x, y)
    # d/da sum((a.diag(b))^2) by hand: 2 (a diag(b)) diag(b)^T
    d = np.diag(b)
    _close(ga[0], 2 * (a @ d)[:, None] * d[None, :])


@pytest.mark.parametrize("cpu", PATHS)
def test_changing_shapes_under_jit_trace_and_plan_again(cpu):
    traces = []

    @jax.jit
    def f(a, b):
        traces.append(a.shape)
        return ej.einsum("bij,bjk->bik", a, b, cpu=cpu)

    for shapes in ([(2, 3, 4), (2, 4, 5)], [(3, 6, 2), (3, 2, 7)], [(2, 3, 4), (2, 4, 5)], [(1, 1, 9), (4, 9, 1)]):
        ops = _ops(shapes, seed=len(traces))
        _close(f(*ops), np.einsum("bij,bjk->bik", *ops))
    assert traces == [(2, 3, 4), (3, 6, 2), (1, 1, 9)]  # the repeat reused its trace


@pytest.mark.parametrize("cpu", PATHS)
def test_vmap_and_per_example_gradients(cpu):
    xs, w = _ops([(6, 3, 4), (4, 5)])
    _close(jax.vmap(lambda x: ej.einsum("ij,jk->ik", x, w, cpu=cpu))(xs), np.einsum("bij,jk->bik", xs, w))
    _close(jax.vmap(lambda x, y: ej.einsum("ii,i->i", x, y, cpu=cpu), in_axes=(None, 0))(
        xs[0, :3, :3], xs[:, 0, :3]), np.einsum("ii,bi->bi", xs[0, :3, :3], xs[:, 0, :3]))
    grads = jax.jit(jax.vmap(jax.grad(lambda x: ej.einsum("ij,jk->", x, w, cpu=cpu))))(xs)
    _close(grads, np.broadcast_to(w.sum(1), (6, 3, 4)))
    # nested vmap: two batch axes in front
    xx = _rand((2, 6, 3, 4), np.float64, 5)
    _close(jax.vmap(jax.vmap(lambda x: ej.einsum("ij,jk->ik", x, w, cpu=cpu)))(xx),
           np.einsum("abij,jk->abik", xx, w))


def test_promotion_float32_and_integers_follow_jax():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = _rand((4, 2), np.float32, 1)
    got = ej.einsum("ij,jk->ik", a, b)
    assert got.dtype == jnp.einsum("ij,jk->ik", a, b).dtype == np.float32
    _close(got, np.einsum("ij,jk->ik", a.astype(np.float32), b), tol=1e-5)
    i = ej.einsum("ij,ij->", a, a, cpu="ffi")
    assert i.dtype == np.int32 and int(i) == int((a.astype(np.int64) ** 2).sum())


def test_the_computation_is_einc_not_xla():
    a, b = _ops([(3, 4), (4, 5)])
    jaxpr = str(jax.make_jaxpr(lambda a, b: ej.einsum("ij,jk->ik", a, b))(a, b))
    assert "pure_callback" in jaxpr and "dot_general" not in jaxpr
    hlo = jax.jit(lambda a, b: ej.einsum("ij,jk->ik", a, b, cpu="ffi")).lower(a, b).as_text()
    assert "einc_einsum_cpu" in hlo and "dot_general" not in hlo
    bwd = jax.jit(jax.value_and_grad(lambda a: ej.einsum("ij,jk->", a, b, cpu="ffi"))).lower(a).as_text()
    assert bwd.count("einc_einsum_cpu") == 2 and "dot_general" not in bwd


def test_ffi_errors_become_python_exceptions():
    x = jnp.ones((2, 2))
    out = jax.ShapeDtypeStruct((2,), x.dtype)
    name = jf.target("cpu")
    with pytest.raises(Exception, match="einc: IndexError"):  # a key no call registered
        jax.block_until_ready(jax.ffi.ffi_call(name, out)(x, key=np.int64(10**9)))
    with pytest.raises(Exception, match="no int64 attribute 'key'"):
        jax.block_until_ready(jax.ffi.ffi_call(name, out)(x, other=np.int64(1)))
    k = jf.key("ij->ij", (2,))  # a (2, 2) result into XLA's (2,) buffer: einc refuses
    with pytest.raises(Exception, match="einc: EincShapeError"):
        jax.block_until_ready(jax.ffi.ffi_call(name, out)(x, key=np.int64(k)))


def test_shim_is_built_once_and_cached(monkeypatch):
    first = jf.build_shim()
    mtime = first.stat().st_mtime_ns
    assert jf.build_shim() == first and first.stat().st_mtime_ns == mtime
    monkeypatch.setattr(jf.shutil, "which", lambda cc: None)
    assert jf.build_shim() == first  # a cached library needs no compiler...
    monkeypatch.setenv("EINC_CACHE_DIR", str(first.parent.parent / "elsewhere"))
    with pytest.raises(Exception, match="C compiler"):  # ...a cold cache does
        jf.build_shim()


def test_user_errors_are_einc_errors_at_trace_time():
    import einc
    with pytest.raises(ValueError, match="cpu="):
        ej.einsum("i->", jnp.ones(3), cpu="gpu")
    with pytest.raises(einc.EincError, match="label 'j' has sizes 3 and 4"):
        jax.jit(lambda a, b: ej.einsum("ij,jk->ik", a, b))(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(einc.EincError, match="2 operand"):
        ej.einsum("ij,jk->ik", jnp.ones((2, 3)))
    with pytest.raises(einc.EincError, match="at least one operand"):
        ej.einsum("->")


def test_docstring_examples_run():
    import doctest

    import einc.autodiff
    for mod in (einc.autodiff, ej, jf):
        failed, tried = doctest.testmod(mod)
        assert tried and not failed, mod.__name__


# ----------------------------------------------------------------------------------------
# GPU: the FFI target on XLA's stream (run on a machine with jax[cuda] and a GPU)

def _cuda_or_skip():
    try:
        return jax.devices("cuda")[0]
    except RuntimeError:
        pytest.skip("jax has no CUDA backend here")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("eq,shapes", CASES, ids=IDS)
def test_gpu_ffi_forward_and_grad(eq, shapes, dtype):
    dev = _cuda_or_skip()
    ops = [jax.device_put(x, dev) for x in _ops(shapes, dtype, seed=3)]
    host = [np.asarray(x) for x in ops]
    f = jax.jit(lambda *x: ej.einsum(eq, *x))
    assert "einc_einsum_cuda" in f.lower(*ops).as_text()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    _close(f(*ops), np.einsum(eq, *host, optimize=True), tol)
    ct = jax.device_put(_rand(np.shape(np.einsum(eq, *host, optimize=True)), dtype, 7), dev)
    _, vjp = jax.vjp(lambda *x: ej.einsum(eq, *x), *ops)
    _, ref = jax.vjp(lambda *x: jnp.einsum(eq, *x, precision="highest"), *ops)  # (not TF32)
    for g, r in zip(jax.jit(vjp)(ct), ref(ct)):
        _close(g, np.asarray(r), tol)
    ran = [go.executable for go in jf._RUNNERS["cuda"].prepared.data.values()]
    assert ran and all(ex.calls for ex in ran)  # einc's CUDA executables ran (no pure_callback)


@pytest.mark.gpu
def test_gpu_ffi_is_ordered_on_xla_stream_and_shapes_change():
    dev = _cuda_or_skip()
    f = jax.jit(lambda a, b: ej.einsum("ij,jk->ik", a * 2.0, b).sum(0) + 1.0)  # XLA, einc, XLA
    for n in (64, 1024, 2048, 64):
        a = jax.device_put(_rand((n, n), np.float32, n), dev)
        b = jax.device_put(_rand((n, n), np.float32, n + 1), dev)
        want = (2.0 * np.asarray(a, np.float64) @ np.asarray(b, np.float64)).sum(0) + 1.0
        np.testing.assert_allclose(np.asarray(f(a, b)), want, rtol=1e-3, atol=1e-2 * np.sqrt(n))
    xs = jax.device_put(_rand((8, 32, 16), np.float64, 1), dev)
    w = jax.device_put(_rand((16, 8), np.float64, 2), dev)
    g = jax.jit(jax.vmap(jax.grad(lambda x: ej.einsum("ij,jk->", x, w))))(xs)
    _close(g, np.broadcast_to(np.asarray(w).sum(1), (8, 32, 16)))
    check_grads(lambda a, b: ej.einsum("ii,ij->j", a, b), [jax.device_put(x, dev) for x in _ops([(3, 3), (3, 4)])],
                order=2, modes=["rev"])
