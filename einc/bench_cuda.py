"""`einc bench --backend cuda`: einc beside torch.einsum and cuBLAS, timed with CUDA events.

Every figure is a median over repeats after warm-up; inputs larger than L2 are rotated
(several copies, a different one each launch) so no run is served from a warm cache.
Results are saved with the device, driver, NVRTC version and the raw samples.
"""
from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

L2_BYTES = 60 * 2**20


def _events_median(torch, fn, repeat=20, inner=5):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn(0)
    torch.cuda.synchronize()
    samples = []
    for r in range(repeat):
        start.record()
        for i in range(inner):
            fn(r * inner + i)
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / 1e3 / inner)
    return statistics.median(samples), samples


def _rotations(torch, make, nbytes):
    return [make() for _ in range(max(1, min(8, 1 + (3 * L2_BYTES) // max(nbytes, 1))))]


def run_cuda_bench(save=True, repeat=20) -> int:
    import torch
    import einc
    from .runtime.cuda import nvrtc_version, runtime

    dev = torch.cuda.get_device_name()
    rows, ok = [], True

    def record(name, flops, nbytes, t, anchors, samples):
        row = {"case": name, "seconds": t, "anchors": anchors, "flops": flops, "bytes": nbytes,
               "tflops": flops / t / 1e12 if flops else None, "tbps": nbytes / t / 1e12 if nbytes else None,
               "samples": samples}
        rows.append(row)
        extra = "  ".join(f"{k}={v * 1e6:.1f}us" for k, v in anchors.items())
        perf = f"{flops / t / 1e12:7.2f} TFLOP/s" if flops else f"{nbytes / t / 1e12:7.2f} TB/s"
        print(f"{name:<34}{t * 1e6:>10.1f}us {perf}   {extra}")

    print(f"device: {dev}; NVRTC {nvrtc_version()}; torch {torch.__version__}")
    # 1. fp32 GEMM 4096^3 through gett, against cuBLAS (torch.matmul) and torch.einsum
    n = 4096
    torch.backends.cuda.matmul.allow_tf32 = False
    A = _rotations(torch, lambda: torch.randn(n, n, device="cuda"), 2 * 4 * n * n)
    B = _rotations(torch, lambda: torch.randn(n, n, device="cuda"), 0)[: len(A)]
    B += [torch.randn(n, n, device="cuda") for _ in range(len(A) - len(B))]
    r = einc.einsum("ij,jk->ik", A[0], B[0])
    ok &= bool(torch.allclose(r, A[0] @ B[0], rtol=1e-3, atol=1e-2))
    k = len(A)
    t, s = _events_median(torch, lambda i: einc.einsum("ij,jk->ik", A[i % k], B[i % k]), repeat)
    tb, _ = _events_median(torch, lambda i: torch.matmul(A[i % k], B[i % k]), repeat)
    te, _ = _events_median(torch, lambda i: torch.einsum("ij,jk->ik", A[i % k], B[i % k]), repeat)
    record("gemm fp32 4096^3 (gett)", 2 * n**3, 0, t, {"cublas": tb, "torch.einsum": te}, s)
    print(f"    einc / cuBLAS = {tb / t:.2f}")
    del A, B

    # 2. row-dot ij,ij->i, i=16384 j=4096 fp32, against the device-to-device copy bandwidth
    X = [torch.randn(16384, 4096, device="cuda") for _ in range(2)]
    Y = [torch.randn(16384, 4096, device="cuda") for _ in range(2)]
    r = einc.einsum("ij,ij->i", X[0], Y[0])
    ok &= bool(torch.allclose(r, (X[0] * Y[0]).sum(1), rtol=1e-3, atol=1e-2))
    nbytes = 2 * X[0].numel() * 4 + 16384 * 4
    t, s = _events_median(torch, lambda i: einc.einsum("ij,ij->i", X[i % 2], Y[i % 2]), repeat)
    dst = torch.empty_like(X[0])
    tc, _ = _events_median(torch, lambda i: dst.copy_(X[i % 2]), repeat)
    te, _ = _events_median(torch, lambda i: torch.einsum("ij,ij->i", X[i % 2], Y[i % 2]), repeat)
    copy_bw = 2 * X[0].numel() * 4 / tc
    record("row-dot ij,ij->i 16384x4096 fp32", 0, nbytes, t, {"copy": tc, "torch.einsum": te}, s)
    print(f"    einc {nbytes / t / 1e12:.2f} TB/s vs copy {copy_bw / 1e12:.2f} TB/s = {nbytes / t / copy_bw:.2f}")
    del X, Y, dst

    # 2b. a long dot (i,i->), 2^27 fp32 elements per operand: split into partial sums
    n = 1 << 27
    X = [torch.randn(n, device="cuda") for _ in range(2)]
    Y = [torch.randn(n, device="cuda") for _ in range(2)]
    r = einc.einsum("i,i->", X[0], Y[0])
    ok &= bool(torch.allclose(r, torch.dot(X[0], Y[0]), rtol=1e-3, atol=1e-1))
    t, s = _events_median(torch, lambda i: einc.einsum("i,i->", X[i % 2], Y[i % 2]), repeat)
    tt, _ = _events_median(torch, lambda i: torch.dot(X[i % 2], Y[i % 2]), repeat)
    te, _ = _events_median(torch, lambda i: torch.einsum("i,i->", X[i % 2], Y[i % 2]), repeat)
    record("dot i,i-> 2^27 fp32", 0, 2 * n * 4, t, {"torch.dot": tt, "torch.einsum": te}, s)
    print(f"    einc {2 * n * 4 / t / 1e12:.2f} TB/s vs copy {copy_bw / 1e12:.2f} TB/s = {2 * n * 4 / t / copy_bw:.2f}")
    del X, Y

    # 3. cached-call overhead: an 8x8 einsum on device arrays, wall clock per call
    a = torch.randn(8, 8, device="cuda")
    for _ in range(100):
        einc.einsum("ij,jk->ik", a, a)
        torch.einsum("ij,jk->ik", a, a)
    torch.cuda.synchronize()
    walls = {}
    for name, fn in (("einc", lambda: einc.einsum("ij,jk->ik", a, a)),
                     ("torch.einsum", lambda: torch.einsum("ij,jk->ik", a, a))):
        per = []
        for _ in range(15):
            t0 = time.perf_counter()
            for _ in range(200):
                fn()
            torch.cuda.synchronize()
            per.append((time.perf_counter() - t0) / 200)
        walls[name] = statistics.median(per)
    print(f"cached 8x8 call: einc {walls['einc'] * 1e6:.1f}us, torch.einsum {walls['torch.einsum'] * 1e6:.1f}us")
    rows.append({"case": "cached call 8x8", "seconds": walls["einc"], "anchors": {"torch.einsum": walls["torch.einsum"]}})

    # 4. cold NVRTC compile of a gett kernel, and a warm disk-cache hit
    from .api import plan_for
    from .codegen.cuda.emit import compile_options, emit_step
    from .runtime.cuda import compile_cubin
    from .runtime.cache import DiskCache
    import tempfile
    rt = runtime()
    plan = plan_for("ij,jk->ik", [(512, 512), (512, 512)], "float32", backend="cuda")
    kern = emit_step(plan, plan.steps[0], rt.arch)
    disk = DiskCache("cuda", root=Path(tempfile.mkdtemp()))
    t0 = time.perf_counter()
    compile_cubin(kern.source, kern.name, compile_options(rt.arch), disk)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    compile_cubin(kern.source, kern.name, compile_options(rt.arch), disk)
    warm = time.perf_counter() - t0
    print(f"gett kernel: cold NVRTC compile {cold * 1e3:.0f} ms, disk-cache hit {warm * 1e3:.2f} ms")
    rows.append({"case": "compile gett", "cold_seconds": cold, "disk_hit_seconds": warm})

    if save:
        import subprocess
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True).stdout.strip()
        out = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"cuda-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps({"device": dev, "driver": driver, "nvrtc": nvrtc_version(),
                                    "torch": torch.__version__, "einc": einc.__version__, "rows": rows}, indent=1))
        print(f"saved {path}")
    return 0 if ok else 1


def load_tccg24(path=None):
    """The TCCG-24 suite rows: (group, case, einsum, {label: size}, gflop, torch figures)."""
    path = Path(path or Path(__file__).resolve().parent.parent / "benchmarks" / "tccg24.tsv")
    rows = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or line.startswith("group") or not line.strip():
            continue
        group, case, subs, sizes, gflop, *torch_figs = line.split("\t")
        ext = {k: int(v) for k, v in (kv.split("=") for kv in sizes.split(","))}
        rows.append((group, case, subs, ext, float(gflop), [float(x) for x in torch_figs]))
    return rows


def run_tccg24(save=True, repeat=5) -> int:
    """TCCG-24 in fp32 on the GPU: einc beside torch.einsum in the same run."""
    import math

    import torch
    import einc
    from .runtime.cuda import nvrtc_version

    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{'case':<28}{'einsum':<22}{'einc':>9}{'torch':>9}  TFLOP/s einc / torch   x     strategies")
    rows, ok = [], True
    for group, case, subs, ext, gflop, _ in load_tccg24():
        lhs = subs.split("->")[0].split(",")
        ops = [torch.randn([ext[c] for c in term], device="cuda") for term in lhs]
        got = einc.einsum(subs, *ops)
        ref = torch.einsum(subs, *ops)
        good = bool(torch.allclose(got, ref, rtol=1e-3, atol=1e-3 * float(ref.abs().max())))
        ok &= good
        t, s = _events_median(torch, lambda i: einc.einsum(subs, *ops), repeat, inner=2)
        tt, _ = _events_median(torch, lambda i: torch.einsum(subs, *ops), repeat, inner=2)
        plan = einc.api.plan_for(subs, [o.shape for o in ops], "float32", backend="cuda")
        strat = "+".join(st.strategy for st in plan.steps)
        rows.append({"group": group, "case": case, "einsum": subs, "gflop": gflop, "einc_s": t,
                     "torch_s": tt, "ok": good, "strategies": strat, "samples": s})
        print(f"{group + ' ' + case:<28}{subs:<22}{t * 1e3:>7.2f}ms{tt * 1e3:>7.2f}ms  {gflop / t / 1e3:6.2f} / "
              f"{gflop / tt / 1e3:6.2f}  {tt / t:5.2f}  {strat}{'' if good else '  MISMATCH'}")
        del ops, got, ref
    gm = math.exp(sum(math.log(r["torch_s"] / r["einc_s"]) for r in rows) / len(rows))
    gm_einc = math.exp(sum(math.log(r["gflop"] / r["einc_s"] / 1e3) for r in rows) / len(rows))
    gm_torch = math.exp(sum(math.log(r["gflop"] / r["torch_s"] / 1e3) for r in rows) / len(rows))
    print(f"geometric mean: einc {gm_einc:.2f} TFLOP/s, torch.einsum {gm_torch:.2f} TFLOP/s, speed-up {gm:.2f}x")
    if save:
        out = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"tccg24-cuda-fp32-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps({"device": torch.cuda.get_device_name(), "nvrtc": nvrtc_version(),
                                    "torch": torch.__version__, "geomean_einc_tflops": gm_einc,
                                    "geomean_torch_tflops": gm_torch, "rows": rows}, indent=1))
        print(f"saved {path}")
    return 0 if ok else 1
