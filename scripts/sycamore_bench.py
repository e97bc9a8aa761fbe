"""Sliced contraction of the frozen Sycamore amplitude network (53 qubits, 14 cycles).

The network (benchmarks/sycamore_n53_m14.json: 221 tensors, every extent 2, cotengra's
contraction path; random complex64 tensors of those shapes stand in for the gates) has an
unsliced peak of 2**40 elements (8 TiB). With a per-device bound it is sliced by einc and
run one slice block per task; beside it, in the same run, cotengra contracts the SAME
sliced tree (path and sliced indices) slice by slice with torch (or cupy) as its backend.

    python scripts/sycamore_bench.py --plan-only                  # planning only (CPU)
    python scripts/sycamore_bench.py --devices 0 --slices 8       # one GPU, 8 slices
    python scripts/sycamore_bench.py --devices 0,1,2,3 --slices 32 --json out.json

``--devices 0,1,2,3`` also times ``--devices 0`` first, and reports strong scaling
E(N) = T(1) / (N T(N)). The default bound, 34.36 GB (SI) per device, is 32 GiB rounded up:
the 256-slice tree peaks at 2**35 + 30 696 bytes (two 2**31-element complex64 tensors live
at once, plus the operands), so exactly "32GiB" needs 512 slices. The recorded values
(the amplitude) of einc and cotengra agree only when every slice runs: with ``--slices N``
each sums its own first N slices.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NETWORK = ROOT / "benchmarks" / "sycamore_n53_m14.json"
DEFAULT_LIMIT = "34.36GB"


def load(path=NETWORK) -> dict:
    return json.loads(pathlib.Path(path).read_text())


def shapes(d):
    return [tuple(d["size_dict"][c] for c in t) for t in d["inputs"]]


def plan(d, memory_limit=DEFAULT_LIMIT, backend="cuda", slicer="auto"):
    """einc's SlicedPlan of the network on the file's frozen path (no data needed)."""
    from opt_einsum.paths import ssa_to_linear
    from einc.slicing import plan_sliced
    path = [tuple(c) for c in ssa_to_linear(d["unsliced"]["ssa_path"])]
    return plan_sliced((d["inputs"], d["output"]), shapes(d), memory_limit, dtype="complex64",
                       optimize=path, slicer=slicer, block=1, backend=backend)


def arrays(d, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes(d):
        x = rng.standard_normal(s) + 1j * rng.standard_normal(s)
        out.append((x / np.sqrt(2 * x.size ** 0.5)).astype(np.complex64))  # keep magnitudes tame
    return out


def time_einc(sp, ops, devices, slices):
    from einc import distributed as D
    client = D.client_for(devices)
    client.run(lambda: None)
    t0 = time.perf_counter()
    D.run(sp, ops, client, slices=slices)  # the first pass compiles every step's kernels
    t1 = time.perf_counter()
    result = D.run(sp, ops, client, slices=slices)
    t2 = time.perf_counter()
    return result, t2 - t1, t1 - t0


def time_cotengra(d, sp, ops, slices, backend):
    """cotengra contracting the same tree (path + sliced indices) slice by slice on device 0."""
    import cotengra as ctg
    name = dict(sp.labels)
    tree = ctg.ContractionTree.from_path(d["inputs"], d["output"], d["size_dict"],
                                         ssa_path=d["unsliced"]["ssa_path"])
    for s in sp.sliced:
        tree.remove_ind_(name[s])
    if backend == "torch":
        import torch
        dev = [torch.from_numpy(a).cuda() for a in ops]
        sync = torch.cuda.synchronize
    else:
        import cupy
        dev = [cupy.asarray(a) for a in ops]
        sync = cupy.cuda.Device().synchronize
    n = min(slices or tree.nslices, tree.nslices)
    tree.contract_slice(dev, 0, backend=backend)  # warm-up
    sync()
    t0 = time.perf_counter()
    total = 0
    for i in range(n):
        total = total + tree.contract_slice(dev, i, backend=backend)
    sync()
    return complex(total.item() if hasattr(total, "item") else total), time.perf_counter() - t0, n


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--network", default=str(NETWORK))
    p.add_argument("--memory-limit", default=DEFAULT_LIMIT, help="per device")
    p.add_argument("--devices", default="0", help="GPU ordinals (0,1,2,3) or cpu,cpu")
    p.add_argument("--slices", type=int, default=None, help="run only the first N slices")
    p.add_argument("--anchor", default="torch", choices=["torch", "cupy", "none"])
    p.add_argument("--plan-only", action="store_true")
    p.add_argument("--json", default=None, help="write the record here")
    args = p.parse_args(argv)
    d = load(args.network)
    devices = [x if x == "cpu" else int(x) for x in args.devices.split(",")]
    backend = "cpu" if all(x == "cpu" for x in devices) else "cuda"
    t = time.perf_counter()
    sp = plan(d, args.memory_limit, backend)
    rec = {"network": d["source"], "memory_limit": args.memory_limit, "nslices": sp.nslices,
           "sliced": [dict(sp.labels)[s] for s in sp.sliced], "peak_bytes": sp.peak_bytes,
           "overhead_flops": sp.overhead_flops, "flops_unsliced": sp.flops,
           "plan_seconds": time.perf_counter() - t, "devices": args.devices}
    print(sp.describe())
    if not args.plan_only:
        ops = arrays(d)
        n = min(args.slices or sp.nslices, sp.nslices)
        runs = {}
        for devs in ([devices[:1], devices] if len(devices) > 1 else [devices]):
            r, secs, first = time_einc(sp, ops, devs, n)
            runs[len(devs)] = secs
            rec[f"einc_{len(devs)}dev"] = {"seconds": secs, "per_slice": secs / n, "first_pass": first,
                                           "value": [float(np.real(r)), float(np.imag(r))]}
            print(f"einc {len(devs)} device(s): {n} slices in {secs:.3f} s ({secs / n * 1e3:.1f} ms/slice)")
        if len(runs) > 1:
            N = len(devices)
            rec["strong_scaling_E"] = runs[1] / (N * runs[N])
            print(f"E({N}) = T(1)/(N T(N)) = {rec['strong_scaling_E']:.3f}")
        if args.anchor != "none" and backend == "cuda":
            v, secs, m = time_cotengra(d, sp, ops, n, args.anchor)
            rec[f"cotengra_{args.anchor}"] = {"seconds": secs, "per_slice": secs / m, "value": [v.real, v.imag]}
            print(f"cotengra+{args.anchor}: {m} slices in {secs:.3f} s ({secs / m * 1e3:.1f} ms/slice)")
        rec["slices_run"] = n
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rec, indent=1))
    return rec


if __name__ == "__main__":
    main()
