"""Per-call time of cached small multi-step einsums with and without CUDA graphs (GPU machine).

    python scripts/graph_bench.py [--n 64] [--calls 500] [--repeat 15]

For each expression: einc with graphs (the default), einc with graphs switched off
in-process (einc.execute_cuda.set_cuda_graphs(False), what EINC_CUDA_GRAPHS=0 does), and
torch.einsum on the same tensors. A figure is the median over ``repeat`` rounds of the
wall time of ``calls`` back-to-back calls (fresh outputs each call, as a user's loop has)
followed by one synchronise, divided by ``calls``: for inputs this small that is the host
cost per call, which is what graphs cut. GPU time per call (CUDA events around one call)
is printed beside it.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

import einc
from einc.api import _EXECUTABLES
from einc.execute_cuda import graph_memory, set_cuda_graphs

CASES = [
    ("ij,jk,kl->il", 3),           # 2 launches (two GEMM steps)
    ("ij,jk,kl,lm->im", 4),        # 3 launches
]


def wall_us(fn, calls, repeat):
    samples = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def gpu_us(fn, repeat):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(samples)


def executable(subs):
    return [v for k, v in _EXECUTABLES.data.items() if k[0] == "cuda-fast" and k[1] == subs][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--dtype", default="float32")
    args = ap.parse_args()
    dt = getattr(torch, args.dtype)
    print(f"{torch.cuda.get_device_name()}, {args.n}x{args.n} {args.dtype}, "
          f"median of {args.repeat} x {args.calls} calls")
    print(f"{'expression':<18}{'launches':>9}{'graphs us':>11}{'direct us':>11}{'torch us':>10}"
          f"{'speedup':>9}   gpu us (graphs/direct/torch)")
    for subs, nops in CASES:
        ops = [torch.randn(args.n, args.n, device="cuda", dtype=dt) for _ in range(nops)]
        ref = torch.einsum(subs, *[o.double() for o in ops])
        call = lambda: einc.einsum(subs, *ops)
        for _ in range(50):
            call()
        got = call()
        torch.cuda.synchronize()
        err = (got.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)
        ex = executable(subs)
        before = ex.graph_launches
        t_graph = wall_us(call, args.calls, args.repeat)
        g_graph = gpu_us(call, args.repeat)
        assert ex.graph_launches > before, f"the graph path was not used ({ex.graph_error})"
        previous = set_cuda_graphs(False)
        try:
            for _ in range(50):
                call()
            before = ex.graph_launches
            t_direct = wall_us(call, args.calls, args.repeat)
            g_direct = gpu_us(call, args.repeat)
            assert ex.graph_launches == before
        finally:
            set_cuda_graphs(previous)
        tcall = lambda: torch.einsum(subs, *ops)
        for _ in range(50):
            tcall()
        t_torch = wall_us(tcall, args.calls, args.repeat)
        g_torch = gpu_us(tcall, args.repeat)
        print(f"{subs:<18}{len(ex.launchers):>9}{t_graph:>11.2f}{t_direct:>11.2f}{t_torch:>10.2f}"
              f"{t_direct / t_graph:>8.2f}x   {g_graph:.1f} / {g_direct:.1f} / {g_torch:.1f}"
              f"   (max rel err {err:.1e}, graph updates {ex.graph_updates})")
    mem = graph_memory()
    print(f"graph memory pool: {mem['used'] / 2**20:.2f} MiB used, {mem['reserved'] / 2**20:.2f} MiB reserved")


if __name__ == "__main__":
    main()
