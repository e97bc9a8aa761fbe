"""One small skinny launch whose last wave runs as K ranges (the SM count patched down so a
few tiles leave a partial last wave), checked against numpy; for compute-sanitizer:

    compute-sanitizer --tool racecheck python3 scripts/skinny_ksplit_case.py [mfast|kfast]
"""
import os
import sys

import numpy as np

import einc
from einc import api
from einc.codegen.cuda import emit as cuda_emit, emit_skinny
from einc.codegen.cuda.emit import emit_step

emit_skinny.MIN_ROWS = 1
os.environ["EINC_SKINNY_KSPLIT"] = "1"
subs, shapes = {"mfast": ("akb,jk->jba", [(40, 64, 70), (24, 64)]),
                "kfast": ("abk,kj->bja", [(37, 40, 61), (61, 24)])}[sys.argv[1] if len(sys.argv) > 1 else "mfast"]
p = api.plan_for(subs, shapes, "float32", backend="cuda", strategy="gett")
for sms in range(1, 64):
    cuda_emit.SM_COUNT = sms
    if emit_step(p, p.steps[0], gett_tile="skinny").scratch:
        break
rng = np.random.default_rng(0)
ops = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
got = einc.einsum(subs, *ops, backend="cuda", strategy="gett")
ref = np.einsum(subs, *[o.astype(np.float64) for o in ops])
err = float(np.abs(got - ref).max() / np.abs(ref).max())
print(f"{subs} {shapes} on {sms} SMs: max rel err {err:.2e}")
sys.exit(0 if err < 1e-5 else 1)
