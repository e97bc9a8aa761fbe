"""The TMA rows copy (emit_copy_tma.py, kernels/copy_tma.cuh): its maps on the CPU, its
kernels through NVRTC, and on a GPU every element of NaN/poison-filled outputs against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import einc
import einc.api
from einc.codegen.cuda import emit
from einc.codegen.cuda.emit import emit_step
from einc.codegen.cuda.emit_copy_tma import copy_tma_layout

# (subscripts, input shape, dtype): rows copies the TMA unit takes
COPIES = [
    ("njmi->mnji", (96, 84, 84, 96), "bfloat16"),     # TCCG ccsd's GEMM-order copy, full size
    ("njmi->mnji", (5, 7, 9, 40), "bfloat16"),        # ragged boxes along every dimension
    ("abcd->acbd", (3, 5, 4, 40), "float32"),         # the output's modes merged
    ("abcde->dcbae", (3, 4, 5, 6, 32), "float64"),    # five dimensions: the maps' limit
    ("abc->bac", (7, 300, 600), "float32"),           # runs past 256 elements: boxes along dim 0
    ("abc->bac", (3, 5, 48), "int8"),                 # 1-byte elements
    ("abc->bac", (3, 5, 32), "complex128"),           # 16-byte elements as two 8-byte ones
    ("abc->bac", (130, 3, 48), "int16"),
]


def _step(subs, shape, dtype):
    p = einc.api.plan_for(subs, [shape], dtype, backend="cuda")
    assert len(p.steps) == 1, [s.text for s in p.steps]
    return p, p.steps[0]


@pytest.mark.parametrize("subs,shape,dtype", COPIES)
def test_rows_copies_take_the_tma_kernel_with_the_simt_twin(subs, shape, dtype):
    p, step = _step(subs, shape, dtype)
    k = emit_step(p, step, "sm_90")
    assert k.key[1] == "copy_tma" and k.fallback.key[1] == "copy_rows" and k.aligned == (0, 1)
    src, dst = k.tmaps
    assert (src.ptr, dst.ptr) == (1, 0) and src.dims == dst.dims and src.box == dst.box
    assert all(s % 16 == 0 for s in src.strides + dst.strides) and max(src.box) <= 256
    assert src.box[0] * {"UINT8": 1, "UINT16": 2, "UINT32": 4, "UINT64": 8}[src.dtype] % 16 == 0
    assert emit_step(p, step, "sm_80").key[1] == "copy_rows"  # (no TMA before sm_90)


def test_the_maps_describe_both_sides_over_the_same_dimensions():
    """njmi -> mnji: n and j stay neighbours (one dimension of 8064), the box's rows
    cover the output's fastest mode (nj, 8 of them) and the input's (m, 7 of 84)."""
    _, step = _step("njmi->mnji", (96, 84, 84, 96), "bfloat16")
    lay = copy_tma_layout(step, 2)
    assert lay.dims == (96, 8064, 84) and lay.box == (96, 8, 7)
    assert lay.src_strides == (8064 * 2, 96 * 2) and lay.dst_strides == (96 * 2, 8064 * 96 * 2)
    # every element's byte offset through the maps is its offset in each tensor
    n, j, m, i = np.meshgrid(*(np.arange(e) for e in (96, 84, 84, 96)), indexing="ij")
    nj = n * 84 + j
    src = i * 2 + nj * lay.src_strides[0] + m * lay.src_strides[1]
    dst = i * 2 + nj * lay.dst_strides[0] + m * lay.dst_strides[1]
    assert np.array_equal(src, 2 * (((n * 84 + j) * 84 + m) * 96 + i))
    assert np.array_equal(dst, 2 * (((m * 96 + n) * 84 + j) * 96 + i))


@pytest.mark.parametrize("subs,shape,dtype", [
    ("lnim->linm", (84, 96, 96, 84), "bfloat16"),   # 168-byte rows: strides not 16-byte multiples
    ("abcdeg->edcbag", (2, 2, 2, 2, 2, 32), "float32"),  # six dimensions: past the maps' five
])
def test_copies_tma_cannot_describe_keep_the_simt_rows_copy(subs, shape, dtype):
    p, step = _step(subs, shape, dtype)
    if emit._rows_copy_axis(step) is None:
        pytest.skip("not a rows copy")
    assert copy_tma_layout(step, np.dtype(dtype).itemsize) is None
    assert emit_step(p, step, "sm_90").key[1] == "copy_rows"


def test_switch_off(monkeypatch):
    p, step = _step(*COPIES[0])
    monkeypatch.setattr(emit, "COPY_TMA", [False])
    assert emit_step(p, step, "sm_90").key[1] == "copy_rows"


def test_kernels_compile_for_sm_90():
    from test_cuda_codegen import ptxas
    for subs, shape, dtype in COPIES:
        p, step = _step(subs, shape, dtype)
        regs, st, ld, log = ptxas(emit_step(p, step, "sm_90"))
        assert regs > 0 and st == 0 and ld == 0, log


def _torch_dtype(torch, dtype):
    return {"complex128": torch.complex128}.get(dtype, getattr(torch, dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("misalign", [False, True])
@pytest.mark.parametrize("subs,shape,dtype", COPIES)
def test_tma_copies_against_numpy(subs, shape, dtype, misalign):
    """Every element written (the output poisoned first), three calls (the third replays the
    graph); misaligned: input and output one element past 16 bytes (the SIMT twin runs)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    host = rng.integers(-100, 100, size=shape).astype(dtype)
    if dtype == "complex128":
        host = host + 1j * rng.integers(-100, 100, size=shape)
    tdt = _torch_dtype(torch, dtype)
    if dtype == "bfloat16":
        src = torch.from_numpy(host.astype(np.float32)).to(tdt).cuda()
    else:
        src = torch.from_numpy(host).cuda()
    if misalign:
        buf = torch.empty(src.numel() + 1, dtype=tdt, device="cuda")
        buf[1:] = src.reshape(-1)
        src = buf[1:].view(src.shape)
    want = np.einsum(subs, host.astype(np.float32) if dtype == "bfloat16" else host)
    for call in range(3):
        obuf = torch.full((want.size + 1,), 123 if dtype.startswith("int") else float("nan"), dtype=tdt,
                          device="cuda")  # (the values are within +-100)
        out = (obuf[1:] if misalign else obuf[:-1]).view(want.shape)
        assert einc.einsum(subs, src, out=out) is out
        got = out.cpu()
        got = got.float().numpy() if dtype == "bfloat16" else got.numpy()
        assert np.array_equal(got, want), f"call {call}: {np.argwhere(got != want)[:3]}"
