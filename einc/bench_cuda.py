"""`einc bench --backend cuda`: einc beside torch.einsum and cuBLAS, timed with CUDA events.

Every figure is a median over repeats after warm-up, einc's samples taken in turn with its
anchors' (_events_interleaved); inputs larger than L2 are rotated
(several copies, a different one each launch) so no run is served from a warm cache.
Results are saved with the device, driver, NVRTC version and the raw samples.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import time
from pathlib import Path

import numpy as np

from .cost import predict_plan, profile_for
from .progress import Progress

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


def _events_interleaved(torch, fns, repeat=5, inner=2):
    """[(median, samples)] of each of ``fns``, their samples taken in turn: sample r of one,
    then of the next, the order reversed every other round. Clock and power drift during
    the run so fall on all of them alike; timing one wholly before the other left the second
    on a card its predecessor had heated (a power-limited GPU lowers its clock within
    milliseconds), which only interleaving separates from the kernels themselves."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for fn in fns:
        for _ in range(3):
            fn(0)
    torch.cuda.synchronize()
    samples = [[] for _ in fns]
    for r in range(repeat):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for j in order:
            start.record()
            for i in range(inner):
                fns[j](r * inner + i)
            stop.record()
            stop.synchronize()
            samples[j].append(start.elapsed_time(stop) / 1e3 / inner)
    return [(statistics.median(s), s) for s in samples]


def _rotations(torch, make, nbytes):
    return [make() for _ in range(max(1, min(8, 1 + (3 * L2_BYTES) // max(nbytes, 1))))]


def _tensor_core_gemms(torch, einc, record, repeat, n) -> bool:
    """n^3 GEMMs on tensor cores (fp32 too: on sm_90 the fp64 ones) beside cuBLAS in the same dtype."""
    ok = True
    cases = [  # name, torch dtype, einc kwargs, cuBLAS call, einsum
        ("fp32", torch.float32, {}, lambda a, b: a @ b, "ij,jk->ik"),  # (sm_90: on the fp64 tensor cores)
        ("fp16", torch.float16, {}, lambda a, b: a @ b, "ij,jk->ik"),
        ("bf16", torch.bfloat16, {}, lambda a, b: a @ b, "ij,jk->ik"),
        ("tf32", torch.float32, {"precision": "tf32"}, lambda a, b: a @ b, "ij,jk->ik"),
        ("int8 NN", torch.int8, {"dtype": "int32"}, None, "ij,jk->ik"),
        ("int8 TN", torch.int8, {"dtype": "int32"}, None, "ik,jk->ij"),
    ]
    for name, tdt, kw, blas, expr in cases:
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        if tdt == torch.int8:
            make = lambda: torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8)
        else:
            make = lambda: torch.randn(n, n, device="cuda", dtype=tdt)
        A = [make() for _ in range(2)]
        B = [make() for _ in range(2)]
        if tdt == torch.int8:  # cuBLASLt int8 takes B column-major: give it that, its best case
            Bc = [b.t() if expr == "ik,jk->ij" else b.t().contiguous().t() for b in B]
            blas_fn = lambda i: torch._int_mm(A[i % 2], Bc[i % 2])
        else:
            blas_fn = lambda i: blas(A[i % 2], B[i % 2])
        want = blas_fn(0)
        r = einc.einsum(expr, A[0], B[0], **kw)
        if tdt == torch.int8:
            good = bool(torch.equal(r, want))
        else:
            err = (r.float() - want.float()).abs().max().item() / max(want.float().abs().max().item(), 1e-30)
            good = err < (2e-2 if name in ("fp16", "bf16", "tf32") else 1e-3)
        ok &= good
        (t, smp), (tb, _) = _events_interleaved(
            torch, [lambda i: einc.einsum(expr, A[i % 2], B[i % 2], **kw), blas_fn], repeat, 2)
        record(f"gemm {name} {n}^3 {expr}", 2 * n**3, 0, t, {"cublas": tb}, smp)
        print(f"    einc / cuBLAS = {tb / t:.2f}{'' if good else '   WRONG RESULT'}")
        del A, B
    torch.backends.cuda.matmul.allow_tf32 = False
    return ok


def _recorder(rows):
    """record(name, flops, bytes, seconds, anchors, samples, **more): appends a result row
    (with ``more``'s keys) to ``rows`` and prints it (TFLOP/s where it has FLOPs, else TB/s)."""
    def record(name, flops, nbytes, t, anchors, samples, **more):
        rows.append({"case": name, "seconds": t, "anchors": anchors, "flops": flops, "bytes": nbytes,
                     "tflops": flops / t / 1e12 if flops else None, "tbps": nbytes / t / 1e12 if nbytes else None,
                     "samples": samples, **more})
        extra = "  ".join(f"{k}={v * 1e6:.1f}us" for k, v in anchors.items())
        perf = f"{flops / t / 1e12:7.2f} TFLOP/s" if flops else f"{nbytes / t / 1e12:7.2f} TB/s"
        print(f"{name:<34}{t * 1e6:>10.1f}us {perf}   {extra}")
    return record


def run_cuda_bench(save=True, repeat=20) -> int:
    """The main GPU bench: einc beside its anchors (cuBLAS, torch.einsum, the copy), each
    comparison's samples taken in turn (_events_interleaved)."""
    import torch
    import einc
    from .runtime.cuda import nvrtc_version, runtime

    dev = torch.cuda.get_device_name()
    rows, ok = [], True
    record = _recorder(rows)

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
    (t, s), (tb, _), (te, _) = _events_interleaved(
        torch, [lambda i: einc.einsum("ij,jk->ik", A[i % k], B[i % k]), lambda i: torch.matmul(A[i % k], B[i % k]),
                lambda i: torch.einsum("ij,jk->ik", A[i % k], B[i % k])], repeat, 5)
    record("gemm fp32 4096^3 (gett)", 2 * n**3, 0, t, {"cublas": tb, "torch.einsum": te}, s)
    print(f"    einc / cuBLAS = {tb / t:.2f}")
    del A, B

    # 1b. tensor cores: fp16 / tf32 / int8 GEMMs against cuBLAS, and fp32 at 8192^3
    ok &= _tensor_core_gemms(torch, einc, record, repeat, int(os.environ.get("EINC_BENCH_TC_N", 8192)))

    # 2. row-dot ij,ij->i, i=16384 j=4096 fp32, against the device-to-device copy bandwidth
    X = [torch.randn(16384, 4096, device="cuda") for _ in range(2)]
    Y = [torch.randn(16384, 4096, device="cuda") for _ in range(2)]
    r = einc.einsum("ij,ij->i", X[0], Y[0])
    ok &= bool(torch.allclose(r, (X[0] * Y[0]).sum(1), rtol=1e-3, atol=1e-2))
    nbytes = 2 * X[0].numel() * 4 + 16384 * 4
    dst = torch.empty_like(X[0])
    (t, s), (tc, _), (te, _) = _events_interleaved(
        torch, [lambda i: einc.einsum("ij,ij->i", X[i % 2], Y[i % 2]), lambda i: dst.copy_(X[i % 2]),
                lambda i: torch.einsum("ij,ij->i", X[i % 2], Y[i % 2])], repeat, 5)
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
    (t, s), (tt, _), (te, _) = _events_interleaved(
        torch, [lambda i: einc.einsum("i,i->", X[i % 2], Y[i % 2]), lambda i: torch.dot(X[i % 2], Y[i % 2]),
                lambda i: torch.einsum("i,i->", X[i % 2], Y[i % 2])], repeat, 5)
    record("dot i,i-> 2^27 fp32", 0, 2 * n * 4, t, {"torch.dot": tt, "torch.einsum": te}, s)
    print(f"    einc {2 * n * 4 / t / 1e12:.2f} TB/s vs copy {copy_bw / 1e12:.2f} TB/s = {2 * n * 4 / t / copy_bw:.2f}")
    del X, Y

    # 2c. small output, huge K: abcd,dbea->ec at 72^5 fp32 (M = N = 72, K = 72^3; the smallmn
    # kernel), against torch.einsum; inputs rotated past L2
    ext = (72,) * 4
    X = _rotations(torch, lambda: (torch.randn(ext, device="cuda"), torch.randn(ext, device="cuda")), 2 * 4 * 72 ** 4)
    r = einc.einsum("abcd,dbea->ec", *X[0])
    ref = torch.einsum("abcd,dbea->ec", *X[0])
    ok &= bool(torch.allclose(r, ref, rtol=1e-3, atol=1e-3 * float(ref.abs().max())))
    (t, s), (te, _) = _events_interleaved(
        torch, [lambda i: einc.einsum("abcd,dbea->ec", *X[i % len(X)]),
                lambda i: torch.einsum("abcd,dbea->ec", *X[i % len(X)])], repeat, 5)
    record("small-output abcd,dbea->ec 72^5 fp32", 2 * 72 ** 5, 2 * 4 * 72 ** 4, t, {"torch.einsum": te}, s)
    print(f"    einc {te / t:.2f}x torch.einsum")
    del X

    # 2d. the intensli group against the copy roofline, per dtype
    ok &= _intensli_rows(torch, einc, record, repeat)

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
        _save("cuda", torch, einc, rows)
    return 0 if ok else 1


def _intensli_rows(torch, einc, record, repeat, dtypes=("bfloat16", "float32")) -> bool:
    """TCCG-24's intensli group (GETTs with N = 24: bandwidth-bound) against the copy roofline:
    each case's samples in turn with a device-to-device copy of its largest operand (the
    bandwidth it is measured against, in the same run) and torch.einsum; 5 calls a sample on
    inputs rotated past L2, so a call's host time hides under its predecessor's kernel."""
    ok = True
    for dtype in dtypes:
        tdt = getattr(torch, dtype)
        item = torch.empty((), dtype=tdt).element_size()
        fracs = []
        for group, _, subs, sizes, _, _ in load_tccg24():
            if group != "intensli":
                continue
            geo = case_geometry(subs, sizes, item)
            sets = _rotations(torch, lambda: [torch.randn(s, device="cuda", dtype=tdt) for s in geo["shapes"]],
                              geo["bytes"])
            k, big = len(sets), max(range(len(geo["shapes"])), key=lambda j: math.prod(geo["shapes"][j]))
            dst = torch.empty_like(sets[0][big])
            ref = torch.einsum(subs, *sets[0])
            good = bool(torch.allclose(einc.einsum(subs, *sets[0]).double(), ref.double(), rtol=TOLERANCE[dtype],
                                       atol=TOLERANCE[dtype] * float(ref.abs().max())))
            ok &= good
            (t, s), (tc, _), (te, _) = _events_interleaved(
                torch, [lambda i: einc.einsum(subs, *sets[i % k]), lambda i: dst.copy_(sets[i % k][big]),
                        lambda i: torch.einsum(subs, *sets[i % k])], repeat, 5)
            bw = 2 * dst.numel() * item / tc
            fracs.append(geo["bytes"] / t / bw)
            model = _predicted(einc.api.plan_for(subs, geo["shapes"], dtype, backend="cuda"), profile_for())
            record(f"intensli {subs} {DTYPES[dtype]}", geo["flops"], geo["bytes"], t,
                   {"copy": tc, "torch.einsum": te}, s, predicted_s=model)
            vs_model = f"; {t / model:.2f}x the cost model's {model * 1e6:.0f} us" if model else ""
            print(f"    {geo['bytes'] / t / 1e12:.2f} TB/s = {fracs[-1]:.2f} of the copy ({bw / 1e12:.2f} TB/s); "
                  f"{te / t:.2f}x torch.einsum{vs_model}{'' if good else '   WRONG RESULT'}")
        print(f"intensli {DTYPES[dtype]}: {min(fracs):.2f}-{max(fracs):.2f} of the copy roofline, "
              f"geometric mean {math.exp(sum(map(math.log, fracs)) / len(fracs)):.2f}")
    return ok


def run_intensli(save=True, repeat=20) -> int:
    """`einc bench --backend cuda --suite intensli`: the main bench's intensli section alone."""
    import torch
    import einc
    rows = []
    print(f"device: {torch.cuda.get_device_name()}")
    ok = _intensli_rows(torch, einc, _recorder(rows), repeat)
    if save:
        _save("intensli", torch, einc, rows)
    return 0 if ok else 1


def _save(kind, torch, einc, rows) -> Path:
    import subprocess
    from .runtime.cuda import nvrtc_version
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    out = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"device": torch.cuda.get_device_name(), "driver": driver, "nvrtc": nvrtc_version(),
                                "timing": "CUDA events, medians; einc and its anchors sampled in turn",
                                "torch": torch.__version__, "einc": einc.__version__, "rows": rows}, indent=1))
    print(f"saved {path}")
    return path


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


DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}
# einc's answer is compared with torch.einsum's, relative to the largest output magnitude:
# half types round every stored product, so their tolerance is their epsilon's order
TOLERANCE = {"float64": 1e-6, "float32": 1e-3, "float16": 1e-2, "bfloat16": 5e-2}


def case_geometry(subs: str, sizes: dict, itemsize: int) -> dict:
    """Shapes, FLOPs, bytes and arithmetic intensity of one contraction, for the roofline.

    FLOPs are the suite's nominal 2 * (product of every extent): one multiply and one add
    per term, as TCCG and cuBLAS count them, so einc and torch.einsum are scored on the
    same work whatever path each takes. Bytes are every operand read once plus the output
    written once: the least any implementation must move.

    >>> case_geometry("ij,jk->ik", {"i": 2, "j": 3, "k": 4}, 4)["flops"]
    48
    """
    lhs, out = subs.split("->")
    shapes = [[sizes[c] for c in term] for term in lhs.split(",")]
    out_shape = [sizes[c] for c in out]
    flops = 2 * math.prod(sizes[c] for c in {c for term in lhs.split(",") for c in term})
    nbytes = itemsize * (sum(math.prod(s) for s in shapes) + math.prod(out_shape))
    return {"shapes": shapes, "output_shape": out_shape, "flops": flops, "bytes": nbytes,
            "intensity": flops / nbytes}


def device_info(torch) -> dict:
    """The device, driver and every version a reader needs to compare or reproduce a run."""
    import importlib.metadata
    import platform
    import subprocess

    import einc
    from .runtime.cuda import nvrtc_version

    def dist_version(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    try:  # the driver release (e.g. 570.124.06); the CUDA API version alone hides it
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        driver = smi.stdout.split("\n")[0].strip() or None
    except (OSError, subprocess.SubprocessError):
        driver = None
    try:  # the CUDA version the driver implements, e.g. 13.0
        from cuda.bindings import driver as cu
        err, api = cu.cuDriverGetVersion()
        api = f"{api // 1000}.{api % 1000 // 10}" if err == cu.CUresult.CUDA_SUCCESS else None
    except Exception:  # a version probe never stops a benchmark
        api = None
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"device": props.name, "compute_capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, "memory_bytes": props.total_memory,
            "driver": driver, "cuda_driver_api": api,
            "cuda_runtime": torch.version.cuda, "nvrtc": nvrtc_version(),
            "cuda_bindings": dist_version("cuda-bindings"), "torch": torch.__version__,
            "numpy": np.__version__, "einc": einc.__version__, "python": platform.python_version()}


def measure_rooflines(torch, dtype: str, tdtype) -> dict:
    """The chart's two roofs, measured on this device in this run (under a second).

    Bandwidth: a 1 GiB device-to-device copy, bytes read + written over time, which is what
    a memory-bound contraction can hope for (datasheet bandwidth is not reachable). Peak: a
    cuBLAS GEMM of 8192^3 in the benchmark's dtype, the best this device does on dense
    contractions through a vendor library.
    """
    src = torch.empty(2**28, device="cuda")  # 1 GiB of fp32, far beyond L2
    dst = torch.empty_like(src)
    t_copy, s_copy = _events_median(torch, lambda i: dst.copy_(src), repeat=10, inner=5)
    moved = 2 * src.numel() * src.element_size()
    del src, dst
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=tdtype)
    b = torch.randn(n, n, device="cuda", dtype=tdtype)
    t_mm, s_mm = _events_median(torch, lambda i: torch.matmul(a, b), repeat=5, inner=1)
    del a, b
    return {"bandwidth_bytes_per_s": moved / t_copy, "bandwidth_bytes": moved,
            "bandwidth_label": "1 GiB device-to-device copy, measured", "bandwidth_samples_s": s_copy,
            "peak_flops_per_s": 2 * n**3 / t_mm, "peak_flops": 2 * n**3,
            "peak_label": f"cuBLAS {DTYPES[dtype]} GEMM, measured", "peak_samples_s": s_mm}


def _timed(flops, median, samples):
    return {"median_s": median, "tflops": flops / median / 1e12, "samples_s": samples}


def _predicted(plan, prof):
    """The cost model's time for ``plan``, or None: a fault in the model must not cost a run's
    measurements (the row keeps them; the report then re-prices it)."""
    try:
        return predict_plan(plan, prof)[0]
    except Exception as e:  # noqa: BLE001 -- reported, and the run goes on
        print(f"  (no prediction: {type(e).__name__}: {e})")
        return None


def run_tccg24(save=True, repeat=5, dtype="float32", plot=False) -> int:
    """TCCG-24 on the GPU: einc beside torch.einsum in the same run, with the roofs measured.

    A dtype einc does not support yet is recorded per case (einc: None plus the error) rather
    than stopping the run, so torch.einsum's figures and the roofs are still kept.
    ``plot`` writes the markdown table (and the PNG chart where matplotlib is installed)
    beside the saved JSON. Returns 1 if any einc result disagrees with torch.einsum.
    """
    import torch
    import einc
    from .report import model_summary, summarize, write_report

    if dtype not in DTYPES:
        raise einc.EincError(f"--dtype {dtype}: use one of {', '.join(DTYPES)}")
    tdtype = getattr(torch, dtype)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32, for torch as for einc
    info = device_info(torch)
    roof = measure_rooflines(torch, dtype, tdtype)
    print(f"{info['device']} (sm_{info['compute_capability'].replace('.', '')}, {info['sm_count']} SMs), "
          f"{dtype}: copy {roof['bandwidth_bytes_per_s'] / 1e12:.2f} TB/s, "
          f"peak {roof['peak_flops_per_s'] / 1e12:.1f} TFLOP/s ({roof['peak_label']})")
    print(f"{'case':<28}{'einsum':<22}{'einc':>9}{'torch':>9}  TFLOP/s einc / torch   x     strategies")
    rows, ok, inner = [], True, 2
    prof = profile_for()  # each row records the cost model's prediction beside the measurement
    itemsize = torch.empty((), dtype=tdtype).element_size()
    cases = load_tccg24()
    bar = Progress(len(cases), f"einc bench tccg24 {dtype}")
    for group, case, subs, sizes, _, _ in cases:
        bar.set_item(f"{group} {case}")
        geo = case_geometry(subs, sizes, itemsize)
        flops = geo["flops"]
        ops = [torch.randn(s, device="cuda", dtype=tdtype) for s in geo["shapes"]]
        ref = torch.einsum(subs, *ops)
        torch_call = lambda i: torch.einsum(subs, *ops)
        row = {"group": group, "case": case, "name": f"{group} {case}", "einsum": subs, "sizes": sizes,
               **geo, "einc": None, "einc_error": None, "torch": None,
               "ratio": None, "ok": None, "strategies": None}
        try:
            got = einc.einsum(subs, *ops)
            tol = TOLERANCE[dtype] * float(ref.abs().max())
            row["ok"] = bool(torch.allclose(got.double(), ref.double(), rtol=TOLERANCE[dtype], atol=tol))
            del got
            # torch's and einc's samples taken in turn (_events_interleaved)
            (tt, ts), (te, es) = _events_interleaved(torch, [torch_call, lambda i: einc.einsum(subs, *ops)],
                                                      repeat, inner)
            plan = einc.api.plan_for(subs, geo["shapes"], dtype, backend="cuda")
            row.update(einc=_timed(flops, te, es), ratio=tt / te, predicted_s=_predicted(plan, prof),
                       strategies="+".join(st.strategy for st in plan.steps))
        except einc.EincError as e:
            row["einc_error"] = f"{type(e).__name__}: {e}"
            tt, ts = _events_median(torch, torch_call, repeat, inner)
        row["torch"] = _timed(flops, tt, ts)
        ok &= row["ok"] is not False
        rows.append(row)
        name = f"{group} {case}"
        if row["einc"] is None:
            why = row["einc_error"].splitlines()[0][:60]
            bar.print(f"{name:<28}{subs:<22}{'-':>9}{tt * 1e3:>7.2f}ms  einc: {why}")
        else:
            te = row["einc"]["median_s"]
            bar.print(f"{name:<28}{subs:<22}{te * 1e3:>7.2f}ms{tt * 1e3:>7.2f}ms  {flops / te / 1e12:6.2f} / "
                      f"{flops / tt / 1e12:6.2f}  {tt / te:5.2f}  {row['strategies']}"
                      f"{'' if row['ok'] else '  MISMATCH'}")
        del ops, ref
        bar.advance()
    bar.close()
    result = {"schema": 2, "suite": "tccg24", "backend": "cuda", "dtype": dtype,
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), **info,
              "timing": {"method": "CUDA events, 3 warm-up calls each; einc's and torch.einsum's samples "
                                   "taken in turn (the order reversed every other round)", "statistic": "median",
                         "repeat": repeat, "calls_per_sample": inner},
              "roofline": roof, "cost_profile": prof.name, "rows": rows}
    result["summary"] = summ = summarize(result)
    fmt = lambda v, f: "-" if v is None else format(v, f)
    print(f"geometric mean: einc {fmt(summ['geomean_einc_tflops'], '.2f')} TFLOP/s "
          f"({summ['cases_einc']} of {summ['cases']} cases), torch.einsum "
          f"{fmt(summ['geomean_torch_tflops'], '.2f')} TFLOP/s, "
          f"einc / torch {fmt(summ['geomean_ratio'], '.2f')}x")
    print(model_summary(result) or "cost model: no case to price")
    if save:
        out = Path(os.environ.get("EINC_RESULTS_DIR", "benchmarks/results"))
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"tccg24-cuda-{DTYPES[dtype]}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(result, indent=1))
        print(f"saved {path}")
        if plot:
            write_report(path, result, plot_required=False)
    return 0 if ok else 1
