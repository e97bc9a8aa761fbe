"""The CUDA code generator, checked without a GPU.

- every kernel family, for a representative set of einsums x every dtype, compiles with
  NVRTC to cubin for sm_80 and sm_90, and the gett / reduce kernels spill no registers;
- one source per family also compiles with ``nvcc -c`` (when nvcc is on PATH);
- a step's key and source depend on its structure, not its sizes;
- ``meta()`` packs exactly ``meta_size`` bytes, the size of the C struct;
- a CPU emulator of the CUDA execution model (one OS thread per CUDA thread, a real
  barrier for ``__syncthreads``, warp shuffles through a per-warp barrier) runs emitted
  kernels on small problems and compares with numpy: the index math, metadata, offset
  tables, masking and barriers are exercised without a device. (cp.async runs as a plain
  copy there, the pre-sm_80 path of the same kernel.)

Each distinct kernel is compiled once per module (cached by its key) to keep CI short.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import io
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import einc.api as api
from einc.codegen.cuda.emit import DM_DEFAULT, DM_TILES, GETT_LANES, CudaStepKernel, compile_options, emit_step
from einc.errors import EincError
from einc.tune import random_operand
from oracle import assert_matches

DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64",
          "float16", "float32", "float64", "complex64", "complex128")
FAMILIES = ("generic", "reduce", "gett")
ARCHS = ("sm_80", "sm_90")

# (subscripts, shapes, the same structure at other sizes, optimize)
CASES = [
    ("ij,jk->ik", [(64, 32), (32, 16)], [(40, 24), (24, 56)], "auto"),              # matmul
    ("bij,bjk->bik", [(4, 64, 32), (4, 32, 16)], [(3, 20, 9), (3, 9, 30)], "auto"),  # batched
    ("abcd,dbea->ec", [(3, 4, 5, 6), (6, 4, 7, 3)], [(2, 3, 9, 5), (5, 3, 4, 2)], "auto"),
    ("ij,jk->ik", [(31, 17), (17, 33)], [(63, 65), (65, 33)], "auto"),              # ragged
    ("ij,ij->i", [(16, 8), (16, 8)], [(300, 77), (300, 77)], "auto"),
    ("ij->j", [(16, 8)], [(5, 1000)], "auto"),
    ("ii->", [(8, 8)], [(300, 300)], "auto"),
    ("ij->ji", [(8, 9)], [(5, 7)], "auto"),                                           # permute (short runs)
    ("ij->ji", [(40, 50)], [(40, 62)], "auto"),  # transpose: tiles and vectors by the extents' class
    ("ij,ij->ij", [(8, 9), (8, 9)], [(100, 77), (100, 77)], "auto"),                # Hadamard
    ("i,j->ij", [(8,), (9,)], [(100,), (33,)], "auto"),                               # outer
    ("ij,jk,kl->il", [(5, 6), (6, 7), (7, 8)], [(9, 3), (3, 4), (4, 11)], False),    # 3 operands
    ("ij,ij->", [(5, 6), (5, 6)], [(50, 60), (50, 60)], "auto"),                      # scalar out
    (",ij->ij", [(), (3, 4)], [(), (30, 5)], "auto"),                                 # scalar in
    ("ji,jk->ik", [(32, 64), (32, 16)], [(9, 20), (9, 30)], "auto"),                 # A m-fast
    ("ik,jk->ij", [(64, 32), (16, 32)], [(20, 9), (30, 9)], "auto"),                 # B k-fast
    ("ij,jk->ki", [(64, 32), (32, 16)], [(20, 9), (9, 30)], "auto"),                 # C m-fast: swap
]
# gett with the 128x128 tile (chosen once the tiles fill the GPU): the same variants.
# TCCG ao2mo's layouts at a small size: tabled N with N-fast runs, K-fast A
NARROW_GETT = [("bq,srqa->srba", [(84, 96), (6, 5, 96, 96)]), ("cr,srba->scba", [(84, 96), (6, 96, 5, 96)])]
# ptxas (sm_90 only) keeps 4 bytes of the 96-wide tile's tabled-N layouts on the stack at
# 168 of its 170 registers, whatever the blocks per SM asked (sm_80: none); measured with it
SPILL_OK = {("gett", "96x96x8", True): 4}
BIG_GETT = [
    ("ij,jk->ik", [(2048, 64), (64, 2048)]),
    ("ji,jk->ik", [(64, 2048), (64, 2048)]),
    ("ik,jk->ij", [(2048, 64), (2048, 64)]),
    ("ij,jk->ki", [(2048, 64), (64, 2048)]),
    ("bij,bjk->bik", [(9, 512, 64), (9, 64, 512)]),
    ("abcd,dbea->ec", [(4, 4, 2048, 8), (8, 4, 2048, 4)]),
]
GETT_DTYPES = ("int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64")
BIG_GETT_DTYPES = ("int8", "float16", "float32", "float64")


def plan(subscripts, shapes, dtype, strategy=None, optimize="auto"):
    return api.plan_for(subscripts, shapes, dtype, backend="cuda", strategy=strategy, optimize=optimize)


@functools.lru_cache(maxsize=None)
def all_kernels() -> dict:
    """key -> (kernel, description) for every step of every case x family x dtype."""
    out = {}

    def add(p, what, tile=None):
        for step in p.steps:
            k = emit_step(p, step, gett_tile=tile)
            while k is not None:  # a kernel and its twins (the unaligned pointers' kernels)
                out.setdefault(k.key, (k, f"{what} step {step.text!r} ({step.strategy})"))
                k = k.fallback
    for subs, shapes, _, opt in CASES:
        for fam in FAMILIES:
            for dt in DTYPES:
                add(plan(subs, shapes, dt, fam, opt), f"{subs} {dt} strategy={fam}")
    for dt in DTYPES:  # tiled transposes (permutations whose unit-stride modes differ)
        add(plan("abc->cab", [(40, 33, 20)], dt, "reduce"), f"abc->cab {dt} transpose")
        add(plan("abcd->acbd", [(3, 5, 4, 40)], dt, "reduce"), f"abcd->acbd {dt} rows copy")
        add(plan("abcdefghij->jihgfedcba", [(2,) * 10], dt, "reduce"), f"10-mode reversal {dt} permute")
    labels = "abcdefghijklmnopqrstuvwxyzABCDEF"  # 2**32 elements: in-tile offsets past int32
    add(plan(f"{labels}->{labels[::-1]}", [(2,) * 32], "complex64", "reduce"), "32-mode reversal permute")
    for i, (subs, shapes) in enumerate(BIG_GETT):  # every dtype on the plain GEMM, the
        for dt in GETT_DTYPES if i == 0 else BIG_GETT_DTYPES:  # two pipelines x widths on the rest
            add(plan(subs, shapes, dt, "gett"), f"{subs} {dt} big gett")
        for dt in ("float32", "int32"):  # the 16-k slice tile and the 96-wide one (4-byte raw copies only)
            add(plan(subs, shapes, dt, "gett"), f"{subs} {dt} gett 128x128x16", "128x128x16")
            add(plan(subs, shapes, dt, "gett"), f"{subs} {dt} gett 96x96x8", "96x96x8")
        for dm in DM_TILES:  # fp32 on the fp64 tensor cores
            add(plan(subs, shapes, "float32", "gett"), f"{subs} float32 gett {dm}", dm)
    for subs, shapes in NARROW_GETT:  # the 96-wide tile's TCCG layouts (tabled N, K-fast A, N-fast B)
        add(plan(subs, shapes, "float32", "gett"), f"{subs} float32 gett 96x96x8", "96x96x8")
    for dt in ("float32", "bfloat16", "float16"):  # the stream kernels (ccsd_t: short K, big C)
        add(plan("amji,cbkm->kjicba", [(24, 24, 20, 24), (20, 20, 20, 24)], dt, "gett"), f"ccsd_t {dt} stream")
    return out


def _family(kernel: CudaStepKernel) -> str:
    return kernel.key[1]


@functools.lru_cache(maxsize=None)
def nvrtc_logs(arch: str) -> dict:
    """key -> ptxas -v log (or the error) for every kernel, compiled in parallel."""
    from cuda.core import Program, ProgramOptions

    def build(item):
        key, (k, _) = item
        # sm_90a kernels (wgmma) exist only for sm_90 devices: they build for their own arch
        opts = dict(compile_options(k.arch or arch), ptxas_options="-v")
        log = io.StringIO()
        try:
            obj = Program(k.source, "c++", ProgramOptions(**opts)).compile("cubin", logs=log)
            assert bytes(obj.code)
        except Exception as e:  # collected and reported below, with the kernel's name
            return key, "ERROR " + str(e)
        return key, log.getvalue()
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        return dict(ex.map(build, all_kernels().items()))


def ptxas(kernel, arch: str = "sm_90"):
    """(registers, spill stores, spill loads, ptxas -v log) of one kernel compiled by NVRTC."""
    from cuda.core import Program, ProgramOptions
    log = io.StringIO()
    Program(kernel.source, "c++", ProgramOptions(**compile_options(arch), ptxas_options="-v")).compile(
        "cubin", logs=log)
    return (*resources(log.getvalue()), log.getvalue())


def resources(log: str):
    """(registers, spill stores, spill loads) from a ptxas -v log of one kernel."""
    regs = re.search(r"Used (\d+) registers", log)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    return (int(regs.group(1)) if regs else -1,
            int(spill.group(1)) if spill else -1, int(spill.group(2)) if spill else -1)


# ----------------------------------------------------------------------------------------
# NVRTC, resources, nvcc

def test_the_case_set_covers_every_family_variant():
    fams = {_family(k) for k, _ in all_kernels().values()}
    assert fams == {"generic", "reduce_rows", "reduce_cols", "gett", "transpose", "copy_rows", "copy_tma", "permute",
                    "mma", "wgmma", "stream", "stream_mma"}
    permute = [k for k, _ in all_kernels().values() if _family(k) == "permute"]
    assert {k.key[5] for k in permute} == {"int", "long long"}  # in-tile offset types
    gett = [k for k, _ in all_kernels().values() if _family(k) == "gett"]
    assert {k.key[2] for k in gett} == {"128x128x8", "64x64x8", "128x128x16", "96x96x8", *DM_TILES}
    assert any(k.tables for k in gett) and any("swapped" in k.source for k in gett)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_kernel_compiles_to_cubin_without_spills(arch):
    logs = nvrtc_logs(arch)
    failed = [f"{all_kernels()[key][1]}: {log[:2000]}" for key, log in logs.items() if log.startswith("ERROR")]
    assert not failed, "\n\n".join(failed)
    spills = []
    for key, log in logs.items():
        k, what = all_kernels()[key]
        if arch == "sm_80" and _family(k) == "gett" and k.key[2] in DM_TILES:
            continue  # fp64 mma fragments: emitted only where they run at full rate (sm_90, emit_step's arch)
        regs, st, ld = resources(log)
        assert regs > 0, f"no ptxas -v report for {k.name}"
        allowed = SPILL_OK.get((_family(k), k.key[2], bool(k.key[5][3]))) if _family(k) == "gett" and arch == "sm_90" else 0
        if _family(k) != "generic" and (st or ld) and max(st, ld) > (allowed or 0):
            spills.append(f"{k.name} ({what}): {regs} registers, {st} B spill stores, {ld} B spill loads")
    assert not spills, "\n".join(spills)


def test_no_wgmma_kernel_is_serialised():
    """ptxas C7515: wgmma.mma_async serialised because other instructions define its
    accumulators inside a pipeline stage (the stream-K tail's loop over k slices from u.kb did
    it, costing the whole kernel). Every wgmma kernel must keep its pipeline."""
    logs = nvrtc_logs("sm_90")
    bad = [all_kernels()[key][1] for key, log in logs.items() if "C7515" in log]
    assert not bad, bad


def test_main_kernels_fit_their_occupancy_target(monkeypatch):
    """fp32 gett 128x128 (16-k slices at K = 4096) must fit 2 blocks/SM (128 registers) where
    the DM tiles are off; the DM default (64x128x16d, on sm_90) 2 blocks of 128 threads
    without spills; fp32 row-dot likewise."""
    logs = nvrtc_logs("sm_90")
    p = plan("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float32")
    k = emit_step(p, p.steps[0])
    assert k.key in logs and k.key[2] == DM_DEFAULT and "__launch_bounds__(128, 2)" in k.source
    assert resources(logs[k.key])[1:] == (0, 0)
    monkeypatch.setenv("EINC_GETT_DM", "0")
    k = emit_step(p, p.steps[0])
    assert "128x128x16" in k.key and "__launch_bounds__(256, 2)" in k.source
    assert k.key in logs and resources(logs[k.key])[0] <= 128
    monkeypatch.delenv("EINC_GETT_DM")
    p = plan("ij,ij->i", [(16384, 4096), (16384, 4096)], "float32")
    k = emit_step(p, p.steps[0])
    assert _family(k) == "reduce_rows" and "true, float" in k.source  # unit-stride vector path
    assert k.key in logs and resources(logs[k.key])[0] <= 128


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_one_source_per_family_compiles_with_nvcc(tmp_path):
    picked = {}  # per family, an fp32 kernel
    for k, _ in all_kernels().values():
        if "float32" in k.key:
            picked.setdefault(_family(k), k)
    assert {"generic", "reduce_rows", "reduce_cols", "gett"} <= set(picked)

    def nvcc(k):
        src = tmp_path / f"{k.name}.cu"
        src.write_text(k.source)
        arch = ["-gencode=arch=compute_90a,code=sm_90a"] if k.arch == "sm_90a" else ["-arch=sm_90"]
        r = subprocess.run(["nvcc", *arch, "-c", str(src), "-o", str(tmp_path / f"{k.name}.o")],
                           capture_output=True, text=True)
        return k.name, r.returncode, r.stderr
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        for name, rc, err in ex.map(nvcc, picked.values()):
            assert rc == 0, f"nvcc failed on {name}:\n{err}"


# ----------------------------------------------------------------------------------------
# structure, keys, metadata

@pytest.mark.parametrize("subs,shapes,other,opt", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("family", FAMILIES)
def test_same_structure_at_other_sizes_gives_the_same_key_and_source(subs, shapes, other, opt, family):
    for dt in ("float32", "int8"):
        a, b = plan(subs, shapes, dt, family, opt), plan(subs, other, dt, family, opt)
        assert len(a.steps) == len(b.steps)
        for sa, sb in zip(a.steps, b.steps):
            ka, kb = emit_step(a, sa), emit_step(b, sb)
            assert ka.key == kb.key and ka.name == kb.name
            assert ka.source == kb.source
            assert ka.meta_size == kb.meta_size


def test_sources_embed_no_sizes():
    p = plan("ij,jk->ik", [(1237, 911), (911, 1543)], "float32")
    src = emit_step(p, p.steps[0]).source
    for n in ("1237", "911", "1543"):
        assert n not in src


def test_meta_is_exactly_meta_size_bytes_and_holds_table_pointers():
    for k, what in all_kernels().values():
        ptrs = [0x1000 * (i + 1) for i in range(len(k.tables))]
        m = k.meta(ptrs)
        assert isinstance(m, bytes) and len(m) == k.meta_size, what
        assert k.meta_size % 8 == 0
        words = np.frombuffer(m, dtype=np.uint64)
        for p in ptrs:
            assert p in words, what
        assert all(isinstance(t, np.ndarray) and t.dtype == np.int64 for t in k.tables)
        gx, gy, gz = k.grid
        assert 1 <= gx < 2 ** 31 and gy == gz == 1 and k.block[0] % 32 == 0
        assert (k.smem == 0) != (_family(k) in ("mma", "wgmma", "stream", "stream_mma", "copy_tma") or k.key[-1] == "dm") and re.search(rf'extern "C" __global__ void __launch_bounds__\([^)]*\)\n{k.name}\(', k.source)
        assert '#include "' not in k.source


def test_the_header_names_step_strategy_modes_and_launch():
    p = plan("abcd,dbea->ec", [(4, 4, 2048, 8), (8, 4, 2048, 4)], "float32", "gett")
    src = emit_step(p, p.steps[0]).source
    head = src.split("\n\n")[0]
    for what in ("step:     abcd,dbea->ec", "strategy: gett 128x64x16d tiles on the fp64 tensor cores", "K=table[3 modes]",
                 "launch:"):  # (fp32, a tabled K on sm_90: DM_TABLED_K)
        assert what in head, what


def test_loop_metadata_layout_matches_the_c_struct():
    """EincLoopMeta<R, T>: 6 words, inner_stride[T], free_ext[R], free_stride[T][R], sum_ext[R], sum_stride[T][R]."""
    p = plan("ij,jk,kl->il", [(5, 6), (6, 7), (7, 8)], "float32", "generic", optimize=False)
    k = emit_step(p, p.steps[0])
    R, T = 8, 4
    assert f"EincLoopMeta<{R}, {T}>" in k.source
    assert k.meta_size == 8 * (6 + T + 2 * R + 2 * T * R)
    w = np.frombuffer(k.meta([]), dtype=np.int64)
    assert w[0] == 5 * 8 and w[2] == 2 and w[3] == 1 and w[4] in (6, 7) and w[5] in (6, 7)


def test_more_modes_than_the_default_rank_bound_pick_a_bigger_bound():
    """36 labels (26 free, 10 summed): generic takes MAX_RANK 32 and still compiles."""
    labels = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
    p = plan(f"{labels},{labels[20:]}->{labels[:26]}", [(2,) * 36, (2,) * 16], "float32", "generic")
    k = emit_step(p, p.steps[0])
    assert k.key[2] == 32 and "EincLoopMeta<32, 3>" in k.source and k.meta_size == 8 * (6 + 3 + 64 + 192)
    assert ptxas(k)[0] > 0


def test_gett_falls_back_where_the_gemm_kernel_does_not_apply():
    # complex GEMMs become one real GEMM (plan.complex_as_real): the gett kernel sees reals only
    p = plan("ij,jk->ik", [(64, 32), (32, 16)], "complex64", "gett")
    names = [emit_step(p, s).name for s in p.steps]
    assert sum(n.startswith("einc_gett_f32") for n in names) == 1
    assert all(s.compute == np.float32 for s in p.steps)
    # no K group (an outer product): "gett" asked for, the reduce kernel runs it
    p = plan("ij,jk->ijk", [(64, 32), (32, 16)], "float32", "gett")
    assert not emit_step(p, p.steps[0]).name.startswith("einc_gett")
    p = plan("ij,jk->ik", [(64, 32), (32, 16)], "float32", "gett")
    assert emit_step(p, p.steps[0]).name.startswith("einc_gett")


# ----------------------------------------------------------------------------------------
# CPU emulator of the CUDA execution model

_SHIM = r"""
#include <barrier>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
struct EmuDim { unsigned x = 1, y = 1, z = 1; };
static thread_local EmuDim threadIdx, blockIdx;
static EmuDim blockDim, gridDim;
static std::barrier<>* emu_block_barrier;
static std::barrier<>* emu_warp_barrier[32];
alignas(16) static unsigned char emu_shfl[32][32][16];
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define EINC_HOST_EMULATION 1
inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu_warp_barrier[threadIdx.x / 32]->arrive_and_wait(); }
template <class T> T __shfl_xor_sync(unsigned, T v, int m) {
  const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
  std::memcpy(emu_shfl[w][l], &v, sizeof(T));
  emu_warp_barrier[w]->arrive_and_wait();
  T r;
  std::memcpy(&r, emu_shfl[w][l ^ m], sizeof(T));
  emu_warp_barrier[w]->arrive_and_wait();
  return r;
}
template <class T> T __shfl_sync(unsigned, T v, int src) {
  const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
  std::memcpy(emu_shfl[w][l], &v, sizeof(T));
  emu_warp_barrier[w]->arrive_and_wait();
  T r;
  std::memcpy(&r, emu_shfl[w][src & 31], sizeof(T));
  emu_warp_barrier[w]->arrive_and_wait();
  return r;
}
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> void __stcg(T* p, T v) { *p = v; }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline float einc_h2f(unsigned short h) { _Float16 x; std::memcpy(&x, &h, 2); return (float)x; }
inline unsigned short einc_f2h(float f) { _Float16 x = (_Float16)f; unsigned short h; std::memcpy(&h, &x, 2); return h; }
inline unsigned short einc_d2h(double d) { _Float16 x = (_Float16)d; unsigned short h; std::memcpy(&h, &x, 2); return h; }
inline float einc_bf2f(unsigned short h) { unsigned u = unsigned(h) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned short einc_f2bf(float f) {  // round to nearest even (NaN-free inputs here)
  unsigned u; std::memcpy(&u, &f, 4); u += 0x7FFFu + ((u >> 16) & 1u); return (unsigned short)(u >> 16); }
"""

_LAUNCH = r"""
extern "C" int emu_meta_size() { return (int)sizeof(%(meta)s); }
extern "C" void emu_launch(void** ptrs, const void* meta_bytes, int grid, int block) {
  %(meta)s meta;
  std::memcpy(&meta, meta_bytes, sizeof meta);
  blockDim.x = block;
  gridDim.x = grid;
  for (int b = 0; b < grid; ++b) {  // blocks one after another: `static` is their shared memory
    std::barrier<> bar(block);
    emu_block_barrier = &bar;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    for (int w = 0; w < block / 32; ++w) {
      warps.emplace_back(new std::barrier<>(32));
      emu_warp_barrier[w] = warps.back().get();
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < block; ++t)
      threads.emplace_back([&, t, b] { threadIdx.x = t; blockIdx.x = b; %(name)s(%(args)s, meta); });
    for (auto& th : threads) th.join();
  }
}
"""


def _emulator_available() -> bool:
    if shutil.which("g++") is None:
        return False
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.cpp")
        with open(src, "w") as f:
            f.write("#include <barrier>\nint main() { _Float16 h = 1.5f; std::barrier<> b(1); return (int)h - 1; }\n")
        return subprocess.run(["g++", "-std=c++20", src, "-o", os.path.join(d, "t")],
                              capture_output=True).returncode == 0


needs_emulator = pytest.mark.skipif(not _emulator_available(), reason="needs g++ with C++20 and _Float16")
_EMU = {"dir": None}  # where the emulator's shared libraries go (a pytest tmp dir)


_EMULATED_LIBS: dict = {}


def _emulator_source(kernel: CudaStepKernel, n_ptrs: int) -> str:
    meta = re.search(r"const (Einc\w+(?:<[^>]*>)?) meta\)", kernel.source).group(1)
    return _SHIM + kernel.source + _LAUNCH % dict(
        meta=meta, name=kernel.name, args=", ".join(f"ptrs[{i}]" for i in range(n_ptrs)))


def _build_so(src: str) -> str:
    h = hashlib.sha1(src.encode()).hexdigest()[:16]
    if _EMU["dir"] is None:
        _EMU["dir"] = tempfile.mkdtemp(prefix="einc-cuda-emu-")
    cpp, so = os.path.join(_EMU["dir"], f"{h}.cpp"), os.path.join(_EMU["dir"], f"{h}.so")
    if not os.path.exists(so):
        with open(cpp, "w") as f:
            f.write(src)
        r = subprocess.run(["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w", cpp,
                            "-o", so + ".tmp"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[:4000]
        os.replace(so + ".tmp", so)
    return so


def _emulated(kernel: CudaStepKernel, n_ptrs: int):
    """The kernel built as a host shared library (cached by key for the module)."""
    if kernel.key not in _EMULATED_LIBS:
        lib = ctypes.CDLL(_build_so(_emulator_source(kernel, n_ptrs)))
        lib.emu_launch.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        assert lib.emu_meta_size() == kernel.meta_size, "metadata struct size differs from meta_size"
        _EMULATED_LIBS[kernel.key] = lib
    return _EMULATED_LIBS[kernel.key]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """Builds every emulated case's kernels up front, on all cores."""
    _EMU["dir"] = str(tmp_path_factory.mktemp("cuda-emu"))
    sources = {}
    for subs, shapes, dtype, strategy, tile in EMULATED + EMULATED_EXTRA:
        p = plan(subs, shapes, dtype, strategy, False if subs.count(",") > 1 else "auto")
        for step in p.steps:
            k = _emulable(emit_step(p, step, gett_tile=tile))
            sources[k.key] = _emulator_source(k, 1 + len(step.operands) + bool(k.scratch))
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        list(ex.map(_build_so, sources.values()))
    return emulate


def _misaligned(a: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``a`` whose first element is one element past a 16-byte boundary."""
    raw = np.empty(a.size + 16 // a.itemsize + 1, a.dtype)
    first = (-raw.ctypes.data % 16) // a.itemsize + 1
    out = raw[first:first + a.size].reshape(a.shape)
    out[...] = a
    assert out.ctypes.data % 16 == a.itemsize
    return out


def _emulable(k):
    """The kernel the emulator runs for ``k``: a TMA rows copy (the copy engine, which the
    emulator has not) runs as its SIMT twin, the kernel unaligned pointers get on the device."""
    return k.fallback if k.key[1] == "copy_tma" else k


def emulate(p, arrays, max_grid=3, gett_tile=None, misalign=False, arch="sm_90"):
    """Run every step of plan ``p`` on the emulator (grid capped: the kernels grid-stride);
    ``misalign``: inputs start one element past a 16-byte boundary; ``arch``: the kernels
    emitted for that device (sm_80: no fp64 tensor-core fragments, which the emulator has not)."""
    bufs = {}
    for i, b in enumerate(p.buffers):
        if b.role == "input":
            bufs[i] = (_misaligned if misalign else np.ascontiguousarray)(arrays[b.index])
        elif b.role == "temp":
            bufs[i] = np.full(max(b.size, 1), 77, dtype=b.dtype)
    out = np.empty(p.out_shape, dtype=p.out_dtype)
    out.reshape(-1).view(np.uint8)[...] = 0x7B  # poison: every element must be written
    bufs[p.output] = out
    for step in p.steps:
        k = _emulable(emit_step(p, step, arch, gett_tile=gett_tile))
        lib = _emulated(k, 1 + len(step.operands) + bool(k.scratch))
        tables = [np.ascontiguousarray(t, dtype=np.int64) for t in k.tables]
        meta = ctypes.create_string_buffer(k.meta([t.ctypes.data for t in tables]), k.meta_size)
        order = [bufs[b] for b in (step.result, *step.operands)]
        if k.scratch:  # poisoned but for the part the runtime zeroes
            scratch = np.full(k.scratch, 0x7B, dtype=np.uint8)
            scratch[:k.scratch_zero] = 0
            order.append(scratch)
        ptrs = (ctypes.c_void_p * len(order))(*[b.ctypes.data for b in order])
        lib.emu_launch(ptrs, ctypes.addressof(meta), min(k.grid[0], max_grid), k.block[0])
    return out


def emulate_step(p, step, arrays, size, max_grid=3):
    """Run one step of plan ``p`` whose operands are the plan's inputs on the emulator, into
    a fresh result buffer of ``size`` elements poisoned with 77; returns that buffer."""
    k = _emulable(emit_step(p, step))
    assert not k.scratch
    res = np.full(size, 77, dtype=p.buffers[step.result].dtype)
    ins = [np.ascontiguousarray(arrays[p.buffers[b].index]) for b in step.operands]
    tables = [np.ascontiguousarray(t, dtype=np.int64) for t in k.tables]
    meta = ctypes.create_string_buffer(k.meta([t.ctypes.data for t in tables]), k.meta_size)
    ptrs = (ctypes.c_void_p * (1 + len(ins)))(*[b.ctypes.data for b in (res, *ins)])
    _emulated(k, 1 + len(ins)).emu_launch(ptrs, ctypes.addressof(meta), min(k.grid[0], max_grid), k.block[0])
    return res


make = random_operand  # the tuner's test data: int8 products and sums wrap


EMULATED = [
    # (subscripts, shapes, dtype, strategy, gett_tile)
    ("ij,jk->ik", [(31, 17), (17, 33)], "float32", "gett", None),       # ragged, cp.async path
    ("ij,jk->ik", [(31, 17), (17, 33)], "float32", "gett", "128x128x8"),
    ("ij,jk->ik", [(70, 9), (9, 140)], "int8", "gett", "128x128x8"),    # register path, wraps
    ("ji,jk->ik", [(20, 33), (20, 70)], "float16", "gett", None),       # A m-fast, fp16 -> fp32
    ("ik,jk->ij", [(33, 21), (65, 21)], "float64", "gett", None),       # B k-fast
    ("ij,jk->ki", [(40, 21), (21, 19)], "int64", "gett", None),         # C m-fast: swapped
    ("bij,bjk->bik", [(3, 20, 9), (3, 9, 30)], "int32", "gett", None),  # batch, grid-stride
    ("abcd,dbea->ec", [(3, 4, 5, 6), (6, 4, 7, 3)], "float32", "gett", None),  # tabled K
    ("abcd,cdef->aebf", [(3, 4, 5, 2), (5, 2, 3, 4)], "float64", "gett", None),  # tabled M, N
    ("xyij,xyjk->ikyx", [(2, 3, 5, 4), (2, 3, 4, 6)], "float32", "gett", None),  # tabled batch
    ("ij,jk->ik", [(7, 0), (0, 5)], "float32", "gett", None),           # K = 0 gives zeros
    ("ij,jk->ik", [(200, 70), (70, 150)], "float32", "gett", None),     # ring wraps, 4 tiles/block
    ("ij,jk->ik", [(50, 30), (30, 40)], "float64", "gett", "128x128x8"),  # 2-stage cp.async
    ("ij,jk->ik", [(40, 45), (45, 70)], "int16", "gett", None),         # register path, 6 slices
    # k-fast operands whose innermost K mode is unit-stride: runs of k as vectors
    ("ik,jk->ij", [(33, 24), (65, 24)], "float32", "gett", None),       # both, 8-byte runs (64x64)
    ("ik,jk->ij", [(33, 24), (65, 24)], "float32", "gett", "128x128x8"),  # both, 16-byte runs
    ("ik,jk->ij", [(70, 48), (150, 48)], "float64", "gett", "128x128x8"),  # two 16-byte loads, 2 stages
    ("ap,srqp->srqa", [(5, 12), (4, 2, 3, 12)], "float32", "gett", "128x128x8"),  # swapped, both
    ("lik,jkl->ji", [(3, 5, 8), (7, 8, 3)], "int32", "gett", "128x128x8"),  # tabled K: one vector, one cp.async
    ("lik,jlk->ji", [(3, 5, 6), (7, 3, 6)], "float32", "gett", "128x128x8"),  # tabled, runs cross k = 6
    ("bik,bjk->bij", [(2, 9, 14), (2, 7, 14)], "int32", "gett", None),  # rows misaligned, ragged runs
    # M-fast A / N-fast B: runs of rows (columns) as one cp.async
    ("ji,jk->ik", [(19, 70), (19, 134)], "float32", "gett", "128x128x8"),  # both, ragged edges
    ("ji,jk->ik", [(9, 37), (9, 66)], "float64", "gett", "128x128x8"),  # fp64: two 16-byte pieces
    ("kab,kcd->abcd", [(5, 3, 6), (5, 2, 7)], "float32", "gett", None),  # merged M, N runs
    ("kaxb,kxcd->abcd", [(5, 3, 2, 5), (5, 2, 2, 7)], "float32", "gett", None),  # tabled M: runs cross a jump
    ("ji,jk->ik", [(11, 30), (11, 20)], "int64", "gett", None),         # 64x64: 16-byte runs
    # 16 k per slice, 2 stages: runs of 8 (K-fast in two register parts, M/N-fast as two copies)
    ("ij,jk->ik", [(200, 70), (70, 150)], "float32", "gett", "128x128x16"),  # ragged K: part 2 partial
    ("ji,jk->ik", [(37, 70), (37, 134)], "int32", "gett", "128x128x16"),
    ("kaxb,kxcd->abcd", [(21, 3, 2, 13), (21, 2, 4, 7)], "float32", "gett", "128x128x16"),  # 8-runs cross jumps
    ("lik,jkl->ji", [(3, 5, 8), (7, 8, 3)], "int32", "gett", "128x128x16"),  # tabled K, one vector operand
    ("ij,jk->ki", [(40, 21), (21, 19)], "float32", "gett", "128x128x16"),  # swapped
    ("ik,jk->ij", [(33, 24), (65, 24)], "float32", "gett", "128x128x16"),  # both K-fast: 128x128x8 instead
    # the 96-wide tile (12x8 per thread, 96 threads, rows lane order): ragged, tabled N, swapped
    ("bq,srqa->srba", [(85, 13), (3, 4, 13, 33)], "float32", "gett", "96x96x8"),
    ("ij,jk->ki", [(100, 17), (17, 130)], "int32", "gett", "96x96x8"),
    ("ji,jk->ik", [(19, 70), (19, 134)], "float32", "gett", "96x96x8"),  # M/N runs
    ("ik,jk->ij", [(97, 24), (65, 24)], "float32", "gett", "96x96x8"),  # both K-fast: 128x128x8 instead
    # fp32 on the fp64 tensor cores (DM, gett_dm.cuh): warps of 64x32 fragments, operands staged
    # along their unit stride, fragments read across the slice barrier
    ("ij,jk->ik", [(200, 70), (70, 150)], "float32", "gett", "128x128x16d"),  # ragged, K-fast A, ring wraps
    ("ij,jk->ik", [(200, 75), (75, 150)], "float32", "gett", "64x128x16d"),  # ragged K: last k8 step partial
    ("ik,jk->ij", [(33, 24), (65, 24)], "float32", "gett", "128x128x16d"),  # both K-fast
    ("ik,jk->ij", [(33, 150), (65, 150)], "float32", "gett", "128x64x16d"),  # both K-fast, 4 warps, 3 runs of K
    ("ji,jk->ik", [(19, 140), (19, 134)], "float32", "gett", "128x128x16d"),  # M/N runs, ragged edges
    ("kaxb,kxcd->abcd", [(21, 3, 2, 13), (21, 2, 4, 7)], "float32", "gett", "128x128x16d"),  # tabled runs
    ("abcd,cdef->aebf", [(3, 4, 5, 2), (5, 2, 3, 4)], "float32", "gett", "128x128x16d"),  # tabled M, N: C pairs split
    ("ij,jk->ki", [(300, 21), (21, 19)], "float32", "gett", "128x128x16d"),  # swapped, N odd
    ("xyij,xyjk->ikyx", [(2, 3, 5, 4), (2, 3, 4, 6)], "float32", "gett", "128x128x16d"),  # tabled batch
    ("lik,jlk->ji", [(3, 5, 6), (7, 3, 6)], "float32", "gett", "128x128x16d"),  # tabled K, runs cross k = 6
    ("lik,jlk->ji", [(3, 5, 7), (9, 3, 7)], "float32", "gett", "128x64x16d"),  # tabled K-fast runs, 21 k
    ("ij,jk->ik", [(7, 0), (0, 5)], "float32", "gett", "128x128x16d"),   # K = 0 gives zeros
    ("ij,jk->ik", [(31, 17), (17, 33)], "int32", "gett", "128x128x16d"),  # no fp64 products: SIMT 128x128x8
    ("ij,jk->ik", [(31, 17), (17, 33)], "int32", "gett", "64x128x16d"),  # no fp64 products: the K rule's tile
    ("ik,kj->ij", [(140, 30), (30, 150)], "float32", "gett", "128x64x16d"),  # 4 warps: K-fast A, N-fast B
    ("ji,jk->ik", [(19, 140), (19, 134)], "float32", "gett", "64x128x16d"),  # 4 warps: M and N runs
    ("ajx,jbx->abx", [(3, 40, 2), (40, 5, 2)], "float32", "gett", "128x128x16d"),  # no unit stride: element copies
    ("ij,ij->i", [(5, 37), (5, 37)], "float32", "reduce", None),        # rows, some misaligned
    ("ij,ij->i", [(3, 5000), (3, 5000)], "float16", "reduce", None),    # wide teams (> 32)
    ("ij,ij->", [(30, 40), (30, 40)], "complex64", "reduce", None),     # scalar output
    ("ii->", [(9, 9)], "int16", "reduce", None),                        # strided rows
    ("ij->j", [(13, 7)], "uint8", "reduce", None),                      # column sums
    ("ij->j", [(600, 5)], "float32", "reduce", None),                   # split over 32 slices
    ("ijkl->jl", [(3, 4, 5, 6)], "float32", "reduce", None),             # columns, outer sum
    ("ijk->j", [(3, 4, 50)], "float64", "reduce", None),                 # rows, outer sum
    ("abc->ba", [(4, 5, 33)], "int32", "reduce", None),                  # rows, 2 free modes
    ("ij->ji", [(8, 9)], "bool", "reduce", None),                       # permutation
    ("ij->ji", [(40, 70)], "float32", "reduce", None),                  # transpose: ragged tiles
    ("abcd->dbca", [(3, 20, 2, 17)], "float16", "reduce", None),        # transpose, batch modes
    ("ijk->kji", [(33, 2, 18)], "complex64", "reduce", None),           # transpose, complex
    ("abc->acb", [(3, 130, 70)], "float32", "reduce", None),            # 64x64 tiles: ragged, batch
    ("ij->ji", [(70, 40)], "complex128", "reduce", None),               # 16-byte type: 32x32 tiles
    ("abcdefghij->jihgfedcba", [(2,) * 10], "float32", "reduce", None),  # permute: mode-set tile
    ("abcdefghijkl->lkjihgfedcba", [(3,) + (2,) * 10 + (5,)], "complex64", "reduce", None),  # + outer
    ("abcdefgh->hgfeabcd", [(2,) * 8], "float64", "reduce", None),      # permute: sets overlap
    ("abcdef->faebdc", [(2,) * 5 + (64,)], "int16", "reduce", None),     # permute: a long mode split
    ("ij,ij->ij", [(8, 9), (8, 9)], "complex128", "reduce", None),      # Hadamard
    ("ij,jk->ik", [(6, 5), (5, 4)], "bool", "reduce", None),            # OR of ANDs
    ("ij,jk,kl->il", [(5, 6), (6, 7), (7, 8)], "int8", "generic", None),
    ("abcd,dbea->ec", [(3, 4, 5, 6), (6, 4, 7, 3)], "float64", "generic", None),
    (",ij->ij", [(), (3, 4)], "float32", "generic", None),
]


EMULATED_EXTRA = [("ij,ij->i", [(6, 40), (6, 40)], ["int8", "float32"], "reduce", None)]


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,strategy,tile", EMULATED,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}-{c[1]}{'-' + c[4] if c[4] else ''}" for c in EMULATED])
def test_emulated_kernel_matches_numpy(emulator, subs, shapes, dtype, strategy, tile):
    rng = np.random.default_rng(len(subs) + len(shapes))
    ops = [make(rng, s, dtype) for s in shapes]
    optimize = False if subs.count(",") > 1 else "auto"
    p = plan(subs, shapes, dtype, strategy, optimize)
    assert strategy in {s.strategy for s in p.steps}
    got = emulator(p, ops, gett_tile=tile)
    assert_matches(got, subs, *ops, terms=max(1, int(np.prod([max(n, 1) for s in shapes for n in s]))))


# copies the transpose and rows-copy kernels take with vectors (and, misaligned, without)
VECTOR_COPIES = [
    ("abcd->bcda", [(40, 3, 5, 32)], "float16", "transpose", (32, 48, 8, 8)),  # 16-byte vectors both sides
    ("njmi->jinm", [(2, 3, 36, 40)], "float32", "transpose", (48, 48, 4, 4)),  # TCCG's copy, ragged tiles
    ("abc->acb", [(3, 130, 70)], "float32", "transpose", (80, 48, 2, 2)),  # 2-element vectors, ragged tiles
    ("abcd->acbd", [(3, 5, 4, 40)], "float32", "copy_rows", (4,)),         # shared run: rows moved whole
    ("lnim->linm", [(3, 4, 5, 40)], "float16", "copy_rows", (8,)),
    ("abcd->cabd", [(2, 3, 5, 44)], "int16", "copy_rows", (4,)),
]


@needs_emulator
@pytest.mark.parametrize("misalign", [False, True])
@pytest.mark.parametrize("subs,shapes,dtype,family,tile", VECTOR_COPIES)
def test_emulated_copies_move_vectors_and_fall_back_on_misaligned_pointers(emulator, subs, shapes, dtype,
                                                                          family, tile, misalign):
    """The copy kernels' tiles and vector widths come from the extents and strides (key);
    a pointer one element off the vectors' alignment takes the same tiles element by
    element (the kernel checks it), with the same result."""
    rng = np.random.default_rng(11)
    ops = [make(rng, s, dtype) for s in shapes]
    p = plan(subs, shapes, dtype, "reduce")
    k = _emulable(emit_step(p, p.steps[0]))
    assert k.key[1] == family and k.key[-len(tile):] == tile
    got = emulator(p, ops, misalign=misalign)
    assert np.array_equal(got, np.einsum(subs, *ops))


@needs_emulator
@pytest.mark.parametrize("subs,shapes,dtype,tile", [
    ("ik,jk->ij", [(33, 24), (65, 24)], "float32", "128x128x8"),
    ("lik,jlk->ji", [(3, 5, 8), (7, 3, 8)], "float32", None),
    ("ik,jk->ij", [(70, 48), (150, 48)], "float64", "128x128x8"),
    ("ji,jk->ik", [(19, 70), (19, 134)], "float32", "128x128x8"),
    ("ji,jk->ik", [(9, 37), (9, 66)], "float64", None)])
def test_emulated_gett_vector_runs_fall_back_on_misaligned_inputs(emulator, subs, shapes, dtype, tile):
    """The k-fast vector runs check alignment at run time: inputs one element off a
    16-byte boundary take the element loads (the same kernel, no twin)."""
    rng = np.random.default_rng(3)
    ops = [make(rng, s, dtype) for s in shapes]
    p = plan(subs, shapes, dtype, "gett")
    assert "(vector runs)" in emit_step(p, p.steps[0], gett_tile=tile).source
    got = emulator(p, ops, gett_tile=tile, misalign=True)
    assert_matches(got, subs, *ops, terms=int(np.prod(shapes[0])))


@needs_emulator
@pytest.mark.parametrize("lanes", ["rows", "warps", "warp-pairs"])
@pytest.mark.parametrize("subs,shapes,dtype,tile", [
    ("ij,jk->ik", [(200, 70), (70, 150)], "float32", "128x128x8"),   # ragged, K-fast A runs
    ("ij,jk->ik", [(31, 17), (17, 33)], "float32", None),             # 64x64 tiles
    ("ik,jk->ij", [(70, 48), (150, 48)], "float64", "128x128x8"),    # both K-fast, 2 stages
    ("abcd,cdef->aebf", [(3, 4, 5, 2), (5, 2, 3, 4)], "float64", None),  # tabled M, N (C runs)
    ("ij,jk->ki", [(40, 21), (21, 19)], "int8", "128x128x8")])       # swapped, register path
def test_emulated_gett_lane_orders_match_numpy(emulator, monkeypatch, lanes, subs, shapes, dtype, tile):
    """Every lane order of the fragment reads (EINC_GETT_LANES) computes the same tile."""
    monkeypatch.setenv("EINC_GETT_LANES", lanes)
    rng = np.random.default_rng(11)
    ops = [make(rng, s, dtype) for s in shapes]
    p = plan(subs, shapes, dtype, "gett")
    k = emit_step(p, p.steps[0], gett_tile=tile)
    assert re.search(rf", {GETT_LANES[lanes]}, (true|false), (true|false)>\(out", k.source)  # (then A_MVEC, B_NVEC)
    got = emulator(p, ops, gett_tile=tile, max_grid=5)
    assert_matches(got, subs, *ops, terms=int(np.prod(shapes[0])))


@pytest.mark.parametrize("subs,shapes,dtype,tile", [
    ("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float32", "128x128x16"),  # long K, one K-fast operand
    ("ij,jk->ik", [(4096, 64), (64, 4096)], "float32", "128x128x8"),       # K = 64: 8-k slices
    ("ik,jk->ij", [(4096, 4096), (4096, 4096)], "float32", "128x128x8"),   # both K-fast: two 8-runs
    ("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float64", "128x128x8"),   # 8-byte: shared memory
    ("ij,jk->ik", [(4096, 4096), (4096, 4096)], "int32", "128x128x16"),
    ("ij,jk->ik", [(4096, 4096), (4096, 4096)], "int8", "128x128x8")])     # converting register path
def test_the_128x128_tile_takes_16_k_slices_where_they_apply(monkeypatch, subs, shapes, dtype, tile):
    monkeypatch.setenv("EINC_GETT_DM", "0")  # (fp32 K >= 128 on sm_90 otherwise takes DM_DEFAULT)
    p = plan(subs, shapes, dtype, "gett")
    k = emit_step(p, p.steps[0])
    if dtype == "int8":  # int8 GEMMs plan onto tensor cores; the SIMT tile is asked for
        k = emit_step(p, p.steps[0], gett_tile="128x128x8")
    assert k.key[2] == tile
    assert f"EincGettTile<128, 128, {tile.rsplit('x', 1)[1]}," in k.source


def test_the_16_k_tile_switch_forces_either_or_is_an_einc_error(monkeypatch):
    p = plan("ij,jk->ik", [(4096, 64), (64, 4096)], "float32", "gett")
    monkeypatch.setenv("EINC_GETT_BIG_TILE", "128x128x16")
    assert emit_step(p, p.steps[0]).key[2] == "128x128x16"
    p = plan("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float32", "gett")
    monkeypatch.setenv("EINC_GETT_BIG_TILE", "128x128x8")
    assert emit_step(p, p.steps[0]).key[2] == "128x128x8"
    monkeypatch.setenv("EINC_GETT_BIG_TILE", "128x128x32")
    with pytest.raises(EincError, match="EINC_GETT_BIG_TILE='128x128x32'"):
        emit_step(p, p.steps[0])


@pytest.mark.parametrize("subs,sizes,tile", [
    ("ij,jk->ik", dict(i=8192, j=8192, k=8192), "wgmma128x256ws"),             # strided, long K
    ("lnim,kmjn->lkji", dict(i=96, j=84, k=84, l=84, m=96, n=96), "wgmma256x128ws"),  # tabled N, K
    ("njmi,mknl->lkji", dict(i=96, j=84, k=84, l=96, m=84, n=84), "wgmma192x192wsp"),  # both copied: 14 waves of 192^2
    ("lki,jl->kji", dict(i=384, j=376, k=376, l=384), "wgmma128x256wsp"),  # kernel M = 376, K = 384: C apart
    ("ij,jk->ik", dict(i=16384, j=4096, k=256), "wgmma128x256ws"),            # 128 tiles: one wave at 97%
    ("ki,jk->ji", dict(i=7248, j=7240, k=7248), "wgmma192x192wsp"),         # 11 whole waves, not 12.5 of 13
    ("njmi,kmln->lkji", dict(i=96, j=84, k=84, l=84, m=84, n=96), "wgmma192x192wsp"),  # 12 waves of 192^2, not 14 of 256x128
    ("ap,srqp->srqa", dict(a=96, p=96, q=84, r=84, s=84), "wgmma128x128ws1p"),  # K = 96, N one tile
    ("bq,srqa->srba", dict(a=96, b=84, q=96, r=84, s=84), "wgmma128x128ws1p"),  # K = 96, M one tile
    ("ij,jk->ik", dict(i=16384, j=128, k=4096), "wgmma128x128ws1p"),            # K = 128, wide both ways
    ("amji,cbkm->kjicba", dict(a=24, b=20, c=20, i=24, j=20, k=20, m=24), "wgmma128x128s3"),  # K = 24, tabled M
    ("ij,jk->ik", dict(i=512, j=128, k=512), "wgmma128x128"),                   # K short, few tiles
    ("ij,jk->ik", dict(i=4096, j=160, k=4096), "wgmma256x128"),                 # K = 160 > SHORT_K
    ("ij,jk->ik", dict(i=256, j=256, k=256), "wgmma128x128")])                 # too few tiles
def test_wgmma_takes_the_tiles_that_measured_faster(monkeypatch, subs, sizes, tile):
    monkeypatch.setenv("EINC_STREAM", "0")  # ccsd_t plans onto the stream kernel (test_stream.py)
    shapes = [tuple(sizes[c] for c in t) for t in subs.split("->")[0].split(",")]
    p = plan(subs, shapes, "bfloat16")  # the plan's own steps (lnim,kmjn copies an operand first)
    keys = [emit_step(p, s, "sm_90").key for s in p.steps]
    assert [k[2] for k in keys if k[1] == "wgmma"] == [tile]


def test_an_unknown_lane_order_is_an_einc_error(monkeypatch):
    monkeypatch.setenv("EINC_GETT_LANES", "diagonal")
    p = plan("ij,jk->ik", [(31, 17), (17, 33)], "float32", "gett")
    with pytest.raises(EincError, match="EINC_GETT_LANES='diagonal'"):
        emit_step(p, p.steps[0])


@needs_emulator
def test_emulated_mixed_dtypes_convert_on_load_and_store(emulator):
    rng = np.random.default_rng(7)
    a, b = make(rng, (6, 40), "int8"), make(rng, (6, 40), "float32")
    p = plan("ij,ij->i", [(6, 40), (6, 40)], ["int8", "float32"], "reduce")
    assert_matches(emulator(p, [a, b]), "ij,ij->i", a, b, terms=40)


def test_permute_tiles_only_copies_it_can_fill():
    from einc.codegen.cuda.emit_permute import permute_sets
    sets = lambda subs, shape: [permute_sets(s) for s in plan(subs, [shape], "float32", "reduce").steps]
    got = sets("abcdefghij->jihgfedcba", (2,) * 10)
    assert got[0] is not None and got[0].vol == 1024 and not got[0].outer
    assert sets("abcdefghij->jihgfedcba", (2,) * 9 + (0,)) == [None] * len(plan(
        "abcdefghij->jihgfedcba", [(2,) * 9 + (0,)], "float32", "reduce").steps)  # empty: nothing to tile
    assert sets("ij->ji", (40, 50)) == [None]  # two long modes: the transpose kernel's full 32x32 tiles
    assert sets("abcdefgh->abcdefgh", (2,) * 8) in ([], [None])  # same order: no permutation
    long = sets("abcdef->faebdc", (2,) * 5 + (64,))[0]  # the 64-mode joins by 32 elements
    assert (32, 1, 32) in long.tile and (2, 32, 1024) in long.outer


@needs_emulator
@pytest.mark.parametrize("tile", ["128x128x8", "64x64x8"])
def test_emulated_gett_stores_a_false_run_element_by_element(tile):
    """C's tabled columns 0, 27, 54, 3, 30, ...: the first and last offsets of the run n = 0..3
    are 3 apart, yet it is no run (the store checked only those two and wrote 4 adjacent
    elements). einc_run_contiguous's rule (first, second and last entries) decides it."""
    subs, shapes = "abe,aecd->dbca", [(3, 3, 2), (3, 2, 3, 3)]
    rng = np.random.default_rng(3)
    ops = [make(rng, s_, "float32") for s_ in shapes]
    p = plan(subs, shapes, "float32", "gett")
    k = emit_step(p, p.steps[-1], gett_tile=tile)
    assert k.name.startswith("einc_gett_") and [0, 27, 54, 3] == list(k.tables[-1][:4])
    assert_matches(emulate(p, ops, gett_tile=tile), subs, *ops, terms=2)


def test_copies_ask_l2_for_128_bytes_and_the_switch_turns_it_off(monkeypatch):
    """cp.async's ".L2::128B" in every family's sources (session 12f-g: abk fp32 0.137 ->
    0.107-0.111 ms; 13a: skinny_mma abk bf16 0.077 -> 0.064); EINC_L2_PREFETCH=0 leaves it
    out, =256 sets that size."""
    hint = '#define EINC_L2_HINT ".L2::{}B"'
    cases = [("abk,kj->bja", [(384, 376, 384), (384, 24)], "float32", "skinny"),
             ("abcd,dbea->ec", [(72,) * 4] * 2, "float32", "smallmn"),
             ("ij,jk->ik", [(512, 512), (512, 512)], "float32", "gett"),
             ("ij,jk->ik", [(512, 512), (512, 512)], "bfloat16", "wgmma"),
             ("abk,kj->bja", [(384, 376, 384), (384, 24)], "bfloat16", "skinny_mma")]
    for subs, shapes, dt, family in cases:
        p = api.plan_for(subs, shapes, dt, backend="cuda")
        k = emit_step(p, p.steps[0], "sm_90")
        assert family in k.name and hint.format(128) in k.source, (subs, dt, k.name)
        assert "EINC_L2_HINT \" [%0]" in k.source  # the copies carry the qualifier
    monkeypatch.setenv("EINC_L2_PREFETCH", "0")
    for case in (cases[0], cases[3]):
        p = api.plan_for(*case[:3], backend="cuda")
        assert "#define EINC_L2_HINT \"." not in emit_step(p, p.steps[0], "sm_90").source
    monkeypatch.setenv("EINC_L2_PREFETCH", "256")
    p = api.plan_for(*cases[3][:3], backend="cuda")
    k = emit_step(p, p.steps[0], "sm_90")
    assert hint.format(256) in k.source
    ptxas(k, k.arch or "sm_90")  # (ptxas takes the qualifier on the tensor-core copies too)


def test_kernel_sources_avoid_what_nvrtc_13_0_cannot_compile():
    """The H200 image's NVRTC 13.0 segfaults (no error: the process dies) compiling a generic
    lambda (`auto` parameters) that also takes a reference to an array, `const T (&x)[N]`;
    13.5, which CI installs, compiles it. Found on smallmn (session 4) and checked against
    13.0's libnvrtc here: functions and non-generic lambdas with such parameters (skinny's
    fetch) compile; generic lambdas take pointers instead."""
    import pathlib
    kernels = pathlib.Path(__file__).resolve().parents[1] / "einc" / "codegen" / "cuda" / "kernels"
    array_ref = re.compile(r"\(\s*&\s*\w*\s*\)\s*\[")
    hits = []
    for f in sorted(kernels.glob("*.cuh")):
        text = f.read_text()
        for m in re.finditer(r"\[[&=]?\]\s*\(", text):  # a lambda's parameter list
            depth, i = 1, m.end()
            while depth and i < len(text):
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            params = text[m.end():i]
            if array_ref.search(params) and re.search(r"\bauto\b", params):
                hits.append(f"{f.name}:{text.count(chr(10), 0, m.start()) + 1}")
    assert not hits, hits


def test_emitter_docstring_examples():
    """The emitters' doctests (the tile rules' examples) stay true."""
    import doctest

    import einc.codegen.cuda.emit as emit_mod
    import einc.codegen.cuda.emit_gett_dm as dm_mod
    import einc.codegen.cuda.emit_wgmma as wgmma_mod
    import einc.cost as cost_mod
    for mod in (emit_mod, dm_mod, wgmma_mod, cost_mod):
        failed, tried = doctest.testmod(mod)
        assert tried > 0 and failed == 0, mod.__name__
