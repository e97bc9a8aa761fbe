"""Sliced execution (einc.distributed): bitwise equal on one thread, a thread pool and a
2-worker dask LocalCluster; a block that fails once is retried; devices= shortcut."""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import einc
from einc import distributed as D
from einc.slicing import plan_sliced

distributed = pytest.importorskip("distributed")
rng = np.random.default_rng(11)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _case(dtype):
    shapes = [(12, 18, 10), (10, 16, 14), (14, 18), (16, 12)]
    arrays = [rng.standard_normal(s) for s in shapes]
    if np.dtype(dtype).kind == "c":
        arrays = [a + 1j * rng.standard_normal(a.shape) for a in arrays]
    return "ija,akb,bj,ki->", [a.astype(dtype) for a in arrays]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_bitwise_equal_across_executors(client, dtype):
    subs, arrays = _case(dtype)
    sp = plan_sliced(subs, arrays, "6KB", block=5)
    assert sp.nslices > 5 and len(sp.blocks()) > 2  # several partials, each of several slices
    seq = D.run(sp, arrays, "local")
    with ThreadPoolExecutor(2) as pool:
        threads = D.run(sp, arrays, pool)
    dask = D.run(sp, arrays, client)
    np.testing.assert_allclose(seq, np.einsum(subs, *arrays), rtol=1e-10)
    assert seq.tobytes() == threads.tobytes() == dask.tobytes()


def test_stacked_and_summed_on_the_cluster(client):
    a, b, c = (rng.standard_normal(s) for s in [(20, 30), (30, 40), (40, 24)])
    sp = plan_sliced("ij,jk,kl->il", [a, b, c], "8KB", block=4)
    assert sp.stacked and len(sp.stacked) < len(sp.sliced)
    got = einc.einsum("ij,jk,kl->il", a, b, c, memory_limit="8KB", executor=client)
    assert got.tobytes() == einc.einsum("ij,jk,kl->il", a, b, c, memory_limit="8KB", executor="local").tobytes()
    assert D.run(sp, [a, b, c], client).tobytes() == D.run(sp, [a, b, c], "local").tobytes()
    np.testing.assert_allclose(got, a @ b @ c, rtol=1e-12)


def test_failed_block_is_retried(client, tmp_path):
    subs, arrays = _case("float64")
    sp = plan_sliced(subs, arrays, "6KB", block=5)
    expect = D.run(sp, arrays, "local")
    flag = tmp_path / "fail-once"
    # a lambda travels by value and runs in each worker process (a bound method of
    # os.environ would be a pickled copy of the mapping)
    client.run(lambda path: os.environ.update({D.FAULT_ENV: path}), str(flag))
    assert set(client.run(lambda: os.environ.get(D.FAULT_ENV)).values()) == {str(flag)}
    try:
        flag.write_text("x")
        with pytest.raises(D.InjectedFault):  # no retries: the fault is real and surfaces
            D.run(sp, arrays, client, retries=0)
        assert not flag.exists()
        flag.write_text("x")
        got = D.run(sp, arrays, client)  # retried: nothing lost, same bits
        assert not flag.exists()
    finally:
        client.run(lambda: os.environ.pop(D.FAULT_ENV, None))
    assert got.tobytes() == expect.tobytes()


def test_stepwise_runner_matches_compiled_plan():
    """The runner GPU workers use (one einc call per step, on torch CUDA tensors there),
    here on numpy operands: the same sums as the compiled per-slice plan."""
    subs, arrays = _case("complex128")
    sp = plan_sliced(subs, arrays, "6KB", block=3)
    views = D.full_views(sp, arrays)
    for b in range(3):
        np.testing.assert_allclose(D.run_block_steps(sp, views, b), D.run_block(sp, arrays, b), rtol=1e-12)


def test_devices_shortcut_two_cpu_workers():
    subs, arrays = _case("float64")
    got = einc.einsum(subs, *arrays, memory_limit="6KB", devices=["cpu", "cpu"])
    client = D.client_for(["cpu", "cpu"])
    assert len(client.scheduler_info()["workers"]) == 2
    ref = einc.einsum(subs, *arrays, memory_limit="6KB", executor="local")
    assert np.asarray(got).tobytes() == np.asarray(ref).tobytes()
    with pytest.raises(einc.EincError):
        einc.einsum(subs, *arrays, memory_limit="6KB", devices=[])


@pytest.mark.gpu
def test_gpu_two_workers_on_one_device_bitwise():
    """devices=[0, 0] (two worker processes on one GPU) against devices=[0], complex64."""
    pytest.importorskip("torch")
    shapes = [(8, 8, 8), (8, 8, 8), (8, 8), (8, 8)]
    arrays = [(rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64) for s in shapes]
    subs = "ija,akb,bj,ki->"
    one = einc.einsum(subs, *arrays, memory_limit="2KB", devices=[0])
    two = einc.einsum(subs, *arrays, memory_limit="2KB", devices=[0, 0])
    np.testing.assert_allclose(one, np.einsum(subs, *[a.astype(np.complex128) for a in arrays]), rtol=1e-4)
    assert np.asarray(one).tobytes() == np.asarray(two).tobytes()
