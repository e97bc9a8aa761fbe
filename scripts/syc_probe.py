"""Slice 0 of the Sycamore plan, one pairwise step at a time in this process (no Dask),
each step's einc time printed as it finishes (compile included, then a timed repeat):
where a slice's time goes, or which step crashes or hangs.

    python3 scripts/syc_probe.py [memory_limit] [seconds]
"""
import faulthandler
import sys
import time

faulthandler.enable()
sys.path.insert(0, __import__("os").path.dirname(__file__))
import sycamore_bench as bench  # noqa: E402

import torch  # noqa: E402

import einc  # noqa: E402
from einc import api  # noqa: E402
from einc.distributed import pairwise_steps  # noqa: E402

limit = sys.argv[1] if len(sys.argv) > 1 else bench.DEFAULT_LIMIT
budget = float(sys.argv[2]) if len(sys.argv) > 2 else 90.0
d = bench.load()
sp = bench.plan(d, limit)
ops = bench.arrays(d)
tensors = dict(enumerate(bench.slice_views(sp, ops)))
inputs = len(tensors)
n, t_start, total_first, total_again = inputs, time.perf_counter(), 0.0, 0.0
for k, (ids, labels, res) in enumerate(pairwise_steps(sp)):
    args = [tensors.pop(i) if i >= inputs else tensors[i] for i in ids]
    call = lambda: einc.einsum(*[x for a, lab in zip(args, labels) for x in (a, lab)], res,
                               optimize=[tuple(range(len(ids)))])
    known = len(api._EXECUTABLES.data)
    torch.cuda.synchronize(); t0 = time.perf_counter()
    r = call(); torch.cuda.synchronize(); t1 = time.perf_counter()
    r = call(); torch.cuda.synchronize(); t2 = time.perf_counter()
    total_first += t1 - t0
    total_again += t2 - t1
    new = list(api._EXECUTABLES.data.values())[known:]
    kern = [f"{s.strategy}:{s.text}" for s in new[-1].plan.steps] if new and hasattr(new[-1], "plan") else []
    if t2 - t1 > 5e-3 or t1 - t0 > 0.5:
        print(f"step {k:3d} out {tuple(r.shape) if hasattr(r, 'shape') else ()}: first {t1 - t0:.3f} s, "
              f"again {(t2 - t1) * 1e3:.1f} ms  {kern}", flush=True)
    tensors[n] = r
    n += 1
    del args
    if time.perf_counter() - t_start > budget:
        print(f"stopped after step {k} ({budget} s)")
        break
print(f"slice 0: first pass {total_first:.2f} s, again {total_again * 1e3:.1f} ms over {k + 1} steps", flush=True)
