"""Write the cubin of bf16 ki,jk's wgmma step (7248^2, the 192x192 tile) to argv[1], for cuobjdump."""
import sys

import einc.api
from einc.codegen.cuda.emit import compile_options, emit_step
from einc.runtime.cuda import compile_cubin

p = einc.api.plan_for("ki,jk->ji", [(7248, 7248), (7240, 7248)], "bfloat16", backend="cuda")
k = emit_step(p, p.steps[-1], "sm_90", gett_tile="wgmma192x192ws")
print(k.key[2], k.name)
open(sys.argv[1], "wb").write(compile_cubin(k.source, k.name, dict(compile_options("sm_90"), arch=k.arch)))
