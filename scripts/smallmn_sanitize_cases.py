"""The smallmn kernel on ragged, cut and misaligned cases, for compute-sanitizer (GPU machine).

    compute-sanitizer --tool memcheck python3 scripts/smallmn_sanitize_cases.py

Exits non-zero when a result disagrees with numpy.
"""
import os

import numpy as np

import einc
from einc.codegen.cuda import emit_smallmn

emit_smallmn.K_MIN = 1  # the plan picks (and cuts for) smallmn at these small sizes too
os.environ["EINC_SMALLMN"] = "1"
CASES = [("abcd,dbea->ec", [(9, 5, 70, 12), (12, 5, 75, 9)]), ("ik,jk->ij", [(33, 3000), (7, 3000)]),
         ("ki,kj->ij", [(700, 9), (700, 13)]), ("abcdf,dbfea->ec", [(4, 3, 6, 5, 2), (5, 3, 2, 7, 4)])]
bad = 0
rng = np.random.default_rng(0)
for subs, shapes in CASES:
    for dt in ("float32", "float64", "float16"):
        ops = [rng.standard_normal(s).astype(dt) for s in shapes]
        got = einc.einsum(subs, *ops, backend="cuda")
        ref = np.einsum(subs, *[o.astype(np.float64) for o in ops])
        if not np.allclose(got.astype(np.float64), ref, rtol=1e-2, atol=1e-2 * max(1.0, np.abs(ref).max())):
            bad += 1
            print("MISMATCH", subs, dt)
print(f"smallmn sanitize cases: {len(CASES) * 3} runs, {bad} mismatches")
raise SystemExit(1 if bad else 0)
