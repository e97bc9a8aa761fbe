"""einc inside PyTorch (einc/torch.py): the custom op against torch.einsum, gradcheck on the
CPU (llvmlite) backend in float64 and complex128 -- repeated labels, broadcasting, ellipsis,
private labels, several operands -- and torch.compile(fullgraph=True), forward and backward.
GPU versions are marked gpu."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import einc.torch as et  # noqa: E402

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii->", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,i->", [(5,), (5,)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij,k->i", [(3, 4), (2,)]),                       # k private to operand 1: summed
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 3)]),
    ("ij,ij->ij", [(3, 1), (3, 4)]),                  # broadcasting a size-1 axis
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # ellipsis, broadcast batch
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
]


def _rand(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        return torch.complex(torch.randn(shape, generator=g, dtype=torch.float64),
                             torch.randn(shape, generator=g, dtype=torch.float64)).requires_grad_()
    return torch.randn(shape, generator=g, dtype=dtype).requires_grad_()


@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] for c in CASES])
def test_forward_matches_torch_einsum(eq, shapes):
    ops = [_rand(s, torch.float64, i) for i, s in enumerate(shapes)]
    torch.testing.assert_close(et.einsum(eq, *ops), torch.einsum(eq, *ops))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128], ids=["float64", "complex128"])
@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_on_the_cpu_backend(eq, shapes, dtype):
    ops = [_rand(s, dtype, 10 + i) for i, s in enumerate(shapes)]
    assert torch.autograd.gradcheck(lambda *x: et.einsum(eq, *x), ops)


def test_gradients_equal_torch_einsum_s_and_second_order_works():
    a, b = _rand((3, 4), torch.float64, 1), _rand((4, 4), torch.float64, 2)
    ga = torch.autograd.grad(et.einsum("ij,jj->i", a, b).pow(2).sum(), (a, b))
    gt = torch.autograd.grad(torch.einsum("ij,jj->i", a, b).pow(2).sum(), (a, b))
    for x, y in zip(ga, gt):
        torch.testing.assert_close(x, y)
    assert torch.autograd.gradgradcheck(lambda x, y: et.einsum("ij,jk->ik", x, y), (a, b))


def test_integer_operands_run_and_wrap_like_numpy():
    a = torch.full((4, 4), 100, dtype=torch.int8)
    got = et.einsum("ij,jk->ik", a, a)
    assert got.dtype == torch.int8 and int(got[0, 0]) == (4 * 100 * 100 + 128) % 256 - 128


def test_the_result_never_aliases_an_input():
    a = torch.randn(3, 4)
    before = a.clone()
    t = et.einsum("ij->ji", a)  # einc returns a view for a relabelling; the op must copy it
    t.add_(1.0)
    assert torch.equal(a, before) and torch.equal(t, before.T + 1.0)


def test_torch_compile_fullgraph_forward_and_backward():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(6, 5, dtype=torch.float64))

        def forward(self, x):
            return et.einsum("bi,ij->bj", x, self.w).tanh().sum()

    m = Model()
    x = torch.randn(4, 6, dtype=torch.float64)
    compiled = torch.compile(m, fullgraph=True)  # inductor: needs a C++ compiler on the CPU
    loss = compiled(x)
    loss.backward()
    g = m.w.grad.clone()
    m.w.grad = None
    torch.einsum("bi,ij->bj", x, m.w).tanh().sum().backward()
    torch.testing.assert_close(g, m.w.grad)
    torch.testing.assert_close(loss, torch.einsum("bi,ij->bj", x, m.w).tanh().sum())


def test_opcheck_validates_the_registration():
    a, b = torch.randn(3, 4), torch.randn(4, 2)
    torch.library.opcheck(torch.ops.einc.einsum.default, ("ij,jk->ik", [a, b]))


@pytest.mark.gpu
@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] for c in CASES])
def test_gpu_gradcheck(eq, shapes):
    ops = [_rand(s, torch.float64, 20 + i).detach().cuda().requires_grad_() for i, s in enumerate(shapes)]
    assert torch.autograd.gradcheck(lambda *x: et.einsum(eq, *x), ops)


@pytest.mark.gpu
def test_gpu_compile_and_cuda_graph_capture():
    w = torch.randn(64, 32, device="cuda", requires_grad=True)
    x = torch.randn(16, 64, device="cuda")
    f = torch.compile(lambda x, w: et.einsum("bi,ij->bj", x, w).relu().sum(), fullgraph=True)
    f(x, w).backward()
    torch.testing.assert_close(w.grad, torch.autograd.grad(torch.einsum("bi,ij->bj", x, w).relu().sum(), w)[0])
    static_x = x.clone()
    out = torch.empty(16, 32, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up (compile, caches) outside the capture
        out.copy_(et.einsum("bi,ij->bj", static_x, w.detach()))
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out.copy_(et.einsum("bi,ij->bj", static_x, w.detach()))
    static_x.copy_(torch.randn(16, 64, device="cuda"))
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, static_x @ w.detach(), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
def test_gpu_backward_runs_on_autograd_s_thread_with_the_context_set():
    a = torch.randn(128, 64, device="cuda", requires_grad=True)
    b = torch.randn(64, 96, device="cuda", requires_grad=True)
    et.einsum("ij,jk->ik", a, b).square().sum().backward()
    torch.testing.assert_close(a.grad, 2 * (a @ b) @ b.T, rtol=1e-3, atol=1e-3)
