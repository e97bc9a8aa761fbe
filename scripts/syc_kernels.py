"""Sycamore slice 0: each einc kernel's own GPU time for the steps that dominate a slice
(torch.profiler's CUDA activity: every kernel in the process, einc's cuLaunchKernel ones too).

    python3 scripts/syc_kernels.py [N_STEPS] [OUT.json]

Runs slice 0 once (compiling), picks the N_STEPS slowest steps by wall time, then runs
each again under the profiler (EINC_CUDA_GRAPHS=0: one activity record per launch) and
prints step, kernel family and microseconds, slowest steps first.
"""
import json
import os
import sys
import time

os.environ["EINC_CUDA_GRAPHS"] = "0"
sys.path.insert(0, os.path.dirname(__file__))
import sycamore_bench as bench  # noqa: E402

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import einc  # noqa: E402
from einc.distributed import pairwise_steps  # noqa: E402

top = int(sys.argv[1]) if len(sys.argv) > 1 else 12
d = bench.load()
sp = bench.plan(d)
ops = bench.arrays(d)
ext = dict(sp.extents)
views = bench.slice_views(sp, ops)
steps = pairwise_steps(sp)


def call(args, labels, ids):
    return einc.einsum(*[x for a, lab in zip(args, labels) for x in (a, lab)], res_of[ids],
                       optimize=[tuple(range(len(ids)))])


res_of, keep, times = {}, {}, []
tensors, n = dict(enumerate(views)), len(views)
for k, (ids, labels, res) in enumerate(steps):
    res_of[tuple(ids)] = res
    args = [tensors[i] for i in ids]
    r = call(args, labels, tuple(ids))  # compile
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = call(args, labels, tuple(ids))
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t0, k))
    tensors[n] = r
    n += 1
    for i in ids:  # intermediates die once consumed (inputs stay)
        if i >= len(views):
            tensors.pop(i)
slow = sorted(times, reverse=True)[:top]
print(f"slice 0 wall (sum of warm steps): {sum(t for t, _ in times) * 1e3:.1f} ms over {len(steps)} steps")
# re-run the slow steps on fresh operands of the same layout (intermediates: contiguous)
rows = []
for secs, k in slow:
    ids, labels, res = steps[k]
    args = []
    for i, lab in zip(ids, labels):
        if i < len(views):
            args.append(views[i])
        else:
            args.append(torch.randn(tuple(ext[c] for c in lab), dtype=torch.complex64, device="cuda"))
    call(args, labels, tuple(ids))
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call(args, labels, tuple(ids))
        torch.cuda.synchronize()
    kern = [(e.name, e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total)
            for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    rows.append({"step": k, "wall_ms": secs * 1e3, "kernels": [(nm[:60], round(us, 1)) for nm, us in kern]})
    print(f"step {k:3d} wall {secs * 1e3:6.2f} ms: " + ", ".join(f"{nm.split('_')[1]} {us / 1e3:.2f}" for nm, us in kern))
    del args
if len(sys.argv) > 2:
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
