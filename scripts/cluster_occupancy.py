"""How many clusters of a wgmma kernel fit at once (cuOccupancyMaxActiveClusters), for one einsum.

    EINC_WGMMA_CLUSTER=1 python3 scripts/cluster_occupancy.py 'ki,jk->ji:i=7248,j=7240,k=7248' bfloat16
"""
import sys

from cuda.bindings import driver as cu

import einc
from einc.bench_cuda import case_geometry
from einc.codegen.cuda.emit import compile_options, emit_step
from einc.runtime.cuda import runtime

subs, sz = sys.argv[1].split(":")
dtype = sys.argv[2] if len(sys.argv) > 2 else "bfloat16"
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
shapes = case_geometry(subs, sizes, 2)["shapes"]
p = einc.api.plan_for(subs, shapes, dtype, backend="cuda")
rt = runtime()
for s in p.steps:
    k = emit_step(p, s, rt.arch)
    if not k.name.startswith("einc_wgmma"):
        continue
    fn = rt.function(k, compile_options(rt.arch))
    for cl in (1, 2):
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = k.grid[0], 1, 1
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = k.block[0], 1, 1
        cfg.sharedMemBytes = k.smem
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cl, 1, 1
        cfg.attrs, cfg.numAttrs = [attr], 1
        err, n = cu.cuOccupancyMaxActiveClusters(fn, cfg)
        print(k.name[:60], "grid", k.grid, "block", k.block, "smem", k.smem, "cluster", cl, "->", err, n)
