"""Streams: ``stream=`` on the GPU entry points, CUDA Array Interface v3's ``stream`` field and
DLPack's ``__dlpack__(stream=)`` (einc/runtime/streams.py, einc/cuda_call.py).

The GPU tests use *late producers*: the producer's stream first spins for ~0.1 s, then
writes the operand. A consumer that is not ordered after that stream reads stale data (the
controls show the race is real), so a missing wait fails the comparison with numpy.
"""
from __future__ import annotations

import numpy as np
import pytest

import einc
from einc.errors import EincTypeError, EincValueError
from einc.runtime.streams import dlpack_stream, handle_of, same

SPIN = 200_000_000  # GPU clock cycles: ~0.1 s on an H200


# --- anywhere ----------------------------------------------------------------------------

class _Proto:
    def __init__(self, h):
        self.h = h

    def __cuda_stream__(self):
        return (0, self.h)


class _Ptr:
    ptr = 77


def test_stream_handles():
    assert handle_of(5) == 5 and handle_of(0) == 0
    assert handle_of(_Proto(123)) == 123
    assert handle_of(_Ptr()) == 77
    for bad in ("s", 1.5, -1, True, object()):
        with pytest.raises(EincTypeError, match="stream"):
            handle_of(bad)
    assert same(0, 1) and same(1, 0) and same(9, 9) and not same(0, 2) and not same(3, 4)
    assert dlpack_stream(0) == 1 and dlpack_stream(1234) == 1234


def test_stream_argument_is_checked_before_any_device_work():
    a = np.ones((3, 3))
    with pytest.raises(EincTypeError, match="not str"):
        einc.einsum("ij,jk->ik", a, a, stream="default")
    with pytest.raises(EincValueError, match="CUDA backend"):
        einc.einsum("ij,jk->ik", a, a, stream=0, backend="cpu")
    with pytest.raises(EincValueError, match="executor"):
        einc.einsum("ij,jk->ik", a, a, stream=0, executor="local")
    expr = einc.contract_expression("ij,jk->ik", (3, 3), (3, 3))
    with pytest.raises(EincTypeError, match="not list"):
        expr(a, a, stream=[])
    with pytest.raises(EincTypeError, match="not str"):
        einc.tensordot(a, a, 1, stream="x")


def test_clearing_the_executables_clears_the_hot_torch_path():
    """Tests (and einc tune) clear the cache to get kernels built under new settings: the hot
    torch path's entries are those executables and must go with them."""
    from einc.cuda_call import TORCH_HOT
    TORCH_HOT[("ij->i", "stale")] = object()
    einc.api._EXECUTABLES.clear()
    assert not TORCH_HOT


# --- on the GPU ------------------------------------------------------------------------

@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


def _operands(torch, m=256, k=192, n=160):
    g = torch.Generator(device="cuda").manual_seed(0)
    src = torch.rand(m, k, device="cuda", dtype=torch.float64, generator=g)
    y = torch.rand(k, n, device="cuda", dtype=torch.float64, generator=g)
    x = torch.zeros_like(src)
    torch.cuda.synchronize()
    return x, src, y


def _late_copy(torch, stream, dst, src):
    """Queue on ``stream``: spin, then dst <- src (queued from the calling thread, no wait)."""
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SPIN)
        dst.copy_(src)


def _warm(torch, call, *operands):
    """Run ``call`` once on synchronised data: kernels compiled and loaded (a module load or a
    first launch may synchronise the device, which would hide a missing wait)."""
    call(*operands)
    torch.cuda.synchronize()


def _expect(src, y):
    return (src @ y).cpu().numpy()


class _CAI3:
    """A CUDA Array Interface v3 producer naming the stream its data is produced on."""

    def __init__(self, t, stream):
        self._t = t
        cai = dict(t.__cuda_array_interface__)
        cai.update(version=3, stream=stream)
        self.__cuda_array_interface__ = cai


class _DLPack:
    """A DLPack-only producer (torch underneath) that records the consumer stream it is given."""

    def __init__(self, t):
        self._t, self.asked = t, []

    def __dlpack__(self, stream=None):
        self.asked.append(stream)
        return self._t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


def _host(r):
    if hasattr(r, "cpu"):
        return r.cpu().numpy()
    import cupy
    return cupy.asnumpy(r)


@pytest.mark.gpu
def test_the_race_is_real(torch):
    """Control: a consumer stream not ordered after the late producer reads stale zeros."""
    x, src, y = _operands(torch)
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    for _ in range(2):  # the first round loads the kernels (which may synchronise)
        x.zero_()
        torch.cuda.synchronize()
        _late_copy(torch, p, x, src)
        with torch.cuda.stream(s):
            stale = x.sum()
        s.synchronize()
        torch.cuda.synchronize()
    assert stale.item() == 0.0


@pytest.mark.gpu
def test_without_the_wait_einc_would_read_stale_data(torch, monkeypatch):
    """The tests below have teeth: with the producer wait switched off, einc's answer is wrong."""
    from einc.runtime import streams
    x, src, y = _operands(torch)
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    _warm(torch, lambda: einc.einsum("ij,jk->ik", x, y, stream=s))
    monkeypatch.setattr(streams.Orderer, "wait", lambda self, consumer, producers: 0)
    with torch.cuda.stream(p):
        _late_copy(torch, p, x, src)
        r = einc.einsum("ij,jk->ik", x, y, stream=s)
    s.synchronize()
    torch.cuda.synchronize()
    assert not np.allclose(r.cpu().numpy(), _expect(src, y))


@pytest.mark.gpu
def test_explicit_stream_waits_for_torchs_current_stream(torch):
    x, src, y = _operands(torch)
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    _warm(torch, lambda: einc.einsum("ij,jk->ik", x, y, stream=s))
    with torch.cuda.stream(p):
        _late_copy(torch, p, x, src)
        r = einc.einsum("ij,jk->ik", x, y, stream=s)  # s must wait for p (torch's current)
    s.synchronize()
    np.testing.assert_allclose(r.cpu().numpy(), _expect(src, y), rtol=1e-12)
    torch.cuda.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("as_handle", [False, True])
def test_explicit_stream_repeated_calls_and_graphs(torch, as_handle):
    """The cached fast path and CUDA-graph replays order themselves after the producer too."""
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    g = torch.Generator(device="cuda").manual_seed(1)
    b = torch.rand(96, 80, device="cuda", dtype=torch.float64, generator=g)
    c = torch.rand(80, 64, device="cuda", dtype=torch.float64, generator=g)
    for call in range(4):
        src = torch.rand(128, 96, device="cuda", dtype=torch.float64, generator=g)
        x = torch.zeros_like(src)
        torch.cuda.synchronize()
        with torch.cuda.stream(p):
            _late_copy(torch, p, x, src)
            r = einc.einsum("ij,jk,kl->il", x, b, c, stream=s.cuda_stream if as_handle else s)
        s.synchronize()
        np.testing.assert_allclose(r.cpu().numpy(), (src @ b @ c).cpu().numpy(), rtol=1e-12,
                                   err_msg=f"call {call}")
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_default_stream_is_torchs_current_stream(torch):
    x, src, y = _operands(torch)
    p = torch.cuda.Stream()
    _warm(torch, lambda: einc.einsum("ij,jk->ik", x, y))
    with torch.cuda.stream(p):
        _late_copy(torch, p, x, src)
        r = einc.einsum("ij,jk->ik", x, y)  # no stream=: runs on p, behind the copy
    p.synchronize()
    np.testing.assert_allclose(r.cpu().numpy(), _expect(src, y), rtol=1e-12)


@pytest.mark.gpu
def test_hot_torch_path_runs_on_torchs_current_stream(torch):
    """The keyword-free cached torch path (cuda_call.TORCH_HOT) is entered after a repeat and
    still launches on the caller's current stream, behind that stream's producer."""
    from einc.cuda_call import TORCH_HOT
    x, src, y = _operands(torch)
    for _ in range(3):
        _warm(torch, lambda: einc.einsum("ij,jk->ik", x, y))
    assert ("ij,jk->ik", x.shape, x.stride(), x.dtype, 0, y.shape, y.stride(), y.dtype, 0) in TORCH_HOT
    p = torch.cuda.Stream()
    for _ in range(2):
        x.zero_()
        torch.cuda.synchronize()
        with torch.cuda.stream(p):
            _late_copy(torch, p, x, src)
            r = einc.einsum("ij,jk->ik", x, y)
        p.synchronize()
        np.testing.assert_allclose(r.cpu().numpy(), _expect(src, y), rtol=1e-12)


@pytest.mark.gpu
def test_hot_torch_path_keys_layout_dtype_and_type(torch):
    """Views, dtypes and tensor subclasses sharing a shape never reuse another's entry."""
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(64, 48, device="cuda", dtype=torch.float64, generator=g)
    b = torch.rand(48, 64, device="cuda", dtype=torch.float64, generator=g)
    bt = b.t().contiguous().t()  # b's shape, column-major
    for _ in range(3):
        for x, y in ((a, b), (a, bt), (a.float(), b.float()), (torch.nn.Parameter(a), b), (a, b.t().t())):
            r = einc.einsum("ij,jk->ik", x, y)
            assert r.dtype == x.dtype and type(r) is torch.Tensor
            np.testing.assert_allclose(r.detach().cpu().numpy(), (x.double() @ y.double()).detach().cpu().numpy(),
                                       rtol=1e-5 if x.dtype == torch.float32 else 1e-12)


@pytest.mark.gpu
def test_cuda_array_interface_v3_stream_is_waited_for(torch):
    x, src, y = _operands(torch)
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    _warm(torch, lambda: einc.einsum("ij,jk->ik", _CAI3(x, None), _CAI3(y, None), stream=s))
    _late_copy(torch, p, x, src)
    r = einc.einsum("ij,jk->ik", _CAI3(x, p.cuda_stream), _CAI3(y, None), stream=s)
    s.synchronize()
    np.testing.assert_allclose(_host(r), _expect(src, y), rtol=1e-12)
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_cuda_array_interface_v3_stream_is_the_default(torch):
    x, src, y = _operands(torch)
    p = torch.cuda.Stream()
    _warm(torch, lambda: einc.einsum("ij,jk->ik", _CAI3(x, None), _CAI3(y, None)))
    _late_copy(torch, p, x, src)
    r = einc.einsum("ij,jk->ik", _CAI3(x, p.cuda_stream), _CAI3(y, p.cuda_stream))  # runs on p
    p.synchronize()
    np.testing.assert_allclose(_host(r), _expect(src, y), rtol=1e-12)
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_dlpack_producer_is_handed_the_consumer_stream(torch):
    x, src, y = _operands(torch)
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    _warm(torch, lambda: einc.einsum("ij,jk->ik", _DLPack(x), _DLPack(y), stream=s))
    dx, dy = _DLPack(x), _DLPack(y)
    with torch.cuda.stream(p):
        _late_copy(torch, p, x, src)
        r = einc.einsum("ij,jk->ik", dx, dy, stream=s)  # torch's __dlpack__ makes s wait for p
    assert dx.asked == [s.cuda_stream] and dy.asked == [s.cuda_stream]
    s.synchronize()
    np.testing.assert_allclose(_host(r), _expect(src, y), rtol=1e-12)
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_dlpack_on_the_legacy_stream_is_asked_with_1(torch):
    x = torch.rand(8, 8, device="cuda", dtype=torch.float64)
    d = _DLPack(x)
    r = einc.einsum("ij->ji", d, stream=0)
    assert d.asked == [1]  # DLPack's spelling of the legacy default stream
    torch.cuda.synchronize()
    np.testing.assert_array_equal(_host(r), x.T.cpu().numpy())


@pytest.mark.gpu
def test_out_still_being_written_elsewhere_is_waited_for(torch):
    """out= whose producer stream has a late write pending: einc must write after it."""
    x, src, y = _operands(torch)
    x.copy_(src)
    out = torch.zeros(x.shape[0], y.shape[1], device="cuda", dtype=torch.float64)
    torch.cuda.synchronize()
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    _warm(torch, lambda: (out.fill_(0), einc.einsum("ij,jk->ik", x, y, out=out, stream=s)))
    with torch.cuda.stream(p):
        torch.cuda._sleep(SPIN)
        out.fill_(float("nan"))  # a late write to out= that einc's result must come after
        einc.einsum("ij,jk->ik", x, y, out=out, stream=s)
    s.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), _expect(src, y), rtol=1e-12)
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_numpy_operands_on_an_explicit_stream(torch):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((70, 90)), rng.standard_normal((90, 40))
    s = torch.cuda.Stream()
    r = einc.einsum("ij,jk->ik", a, b, stream=s)
    assert isinstance(r, np.ndarray)
    np.testing.assert_allclose(r, a @ b, rtol=1e-12)


@pytest.mark.gpu
def test_contract_expression_and_tensordot_on_the_gpu(torch):
    x, src, y = _operands(torch)
    expr = einc.contract_expression("ij,jk->ik", tuple(x.shape), tuple(y.shape))
    p, s = torch.cuda.Stream(), torch.cuda.Stream()
    _warm(torch, lambda: (expr(x, y, stream=s), einc.tensordot(x, y, 1, stream=s)))
    with torch.cuda.stream(p):
        _late_copy(torch, p, x, src)
        r1 = expr(x, y, stream=s)
        r2 = einc.tensordot(x, y, 1, stream=s)
    s.synchronize()
    np.testing.assert_allclose(r1.cpu().numpy(), _expect(src, y), rtol=1e-12)
    np.testing.assert_allclose(r2.cpu().numpy(), _expect(src, y), rtol=1e-12)
    p.synchronize()
    r3 = expr(x, y)  # device operands, default stream
    assert isinstance(r3, torch.Tensor) and r3.is_cuda
    np.testing.assert_allclose(r3.cpu().numpy(), _expect(src, y), rtol=1e-12)


@pytest.mark.gpu
def test_einc_torch_einsum_stream(torch):
    import einc.torch as et
    x, src, y = _operands(torch)
    s = torch.cuda.Stream()
    _warm(torch, lambda: et.einsum("ij,jk->ik", x, y, stream=s))
    _late_copy(torch, torch.cuda.current_stream(), x, src)  # late producer on the current stream
    r = et.einsum("ij,jk->ik", x, y, stream=s)
    s.synchronize()
    np.testing.assert_allclose(r.cpu().numpy(), _expect(src, y), rtol=1e-12)
    with pytest.raises(EincTypeError, match="torch.cuda.Stream"):
        et.einsum("ij,jk->ik", x, y, stream=5)


def _cupy_spin(cupy):
    return cupy.RawKernel(r"""
    extern "C" __global__ void spin(long long cycles) {
        long long t0 = clock64();
        while (clock64() - t0 < cycles) { }
    }""", "spin")


@pytest.mark.gpu
def test_cupy_producer_stream_and_explicit_stream():
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(4)
    src_h, y_h = rng.standard_normal((200, 150)), rng.standard_normal((150, 120))
    src, y = cupy.asarray(src_h), cupy.asarray(y_h)
    x = cupy.zeros_like(src)
    cupy.cuda.Device().synchronize()
    spin = _cupy_spin(cupy)
    p, s = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    with p:
        spin((1,), (1,), (np.int64(1),))
        einc.einsum("ij,jk->ik", x, y, stream=s)  # warm: kernels loaded
        x[...] = 0
    cupy.cuda.Device().synchronize()
    with p:
        spin((1,), (1,), (np.int64(SPIN),))
        x[...] = src
        r = einc.einsum("ij,jk->ik", x, y, stream=s)  # x's CAI names p: s waits for it
    s.synchronize()
    assert isinstance(r, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(r), src_h @ y_h, rtol=1e-12)
    x[...] = 0
    cupy.cuda.Device().synchronize()
    with p:
        spin((1,), (1,), (np.int64(SPIN),))
        x[...] = src
        r = einc.einsum("ij,jk->ik", x, y)  # default: CuPy's current stream, p
    p.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(r), src_h @ y_h, rtol=1e-12)
