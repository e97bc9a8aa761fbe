"""Host cost of each part of a cached small einsum on device arrays (run on a GPU machine)."""
import time

import torch

import einc
from einc.runtime.device_arrays import current_stream, empty_like_library, view
from einc.runtime.cuda import runtime


def per_call(fn, n=3000):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


a = torch.randn(8, 8, device="cuda")
einc.einsum("ij,jk->ik", a, a)
rt = runtime()
ex = [v for k, v in einc.api._EXECUTABLES.data.items() if k[0] == "cuda-fast"][0]
views = [view(a, 0), view(a, 1)]
stream = rt.stream(current_stream(views))
launcher, which = ex.launchers[0]
out = torch.empty(8, 8, device="cuda")
parts = {
    "einc.einsum (whole call)": lambda: einc.einsum("ij,jk->ik", a, a),
    "torch.einsum": lambda: torch.einsum("ij,jk->ik", a, a),
    "torch.matmul": lambda: torch.matmul(a, a),
    "view x2": lambda: (view(a, 0), view(a, 1)),
    "current_stream": lambda: current_stream(views),
    "empty_like_library": lambda: empty_like_library(views, (8, 8), ex.plan.out_dtype, "C"),
    "executable call": lambda: ex([views[0].ptr, views[1].ptr], out.data_ptr(), stream),
    "raw launch": lambda: launcher([out.data_ptr(), views[0].ptr, views[1].ptr], stream),
    "torch.empty": lambda: torch.empty((8, 8), device="cuda"),
}
for name, fn in parts.items():
    print(f"{name:<28}{per_call(fn):8.2f} us")
print("steps:", [(s.strategy, s.text) for s in ex.plan.steps], "grid", ex.kernels[0].grid, "block", ex.kernels[0].block)
