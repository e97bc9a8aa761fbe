"""The tuned two-mode split of lki,kjl in bf16 on the GPU: the plan's steps and kernels, and
the worst error against numpy (float64) beside the tolerance the tests use.

    python3 scripts/split_check.py
"""
import os
import tempfile

import numpy as np

os.environ.setdefault("EINC_CACHE_DIR", tempfile.mkdtemp())
import einc  # noqa: E402
from einc import tuned  # noqa: E402
from einc.tune import plan_with  # noqa: E402
from einc.tuned import Choice  # noqa: E402

subs, shapes = "lki,kjl->ji", [(384, 94, 40), (94, 36, 384)]
for dtype in ("float32", "bfloat16"):
    for split in (None, 141):
        tuned.reset()
        _, t = plan_with(subs, shapes, dtype)
        if split:
            tuned.store().put(t.key, tuned.entry(t.parts, {0: Choice("gett", None, split)}))
        einc.api._EXECUTABLES.clear()
        p = einc.api.plan_for(subs, shapes, dtype, backend="cuda")
        rng = np.random.default_rng(5)
        from test_differential import make_array
        ops = [make_array(rng, s, dtype, 0) for s in shapes]
        got = np.asarray(einc.einsum(subs, *ops, backend="cuda")).astype(np.float64)
        ref = np.einsum(subs, *[o.astype(np.float64) for o in ops])
        err = np.abs(got - ref).max()
        print(dtype, split, [(s.strategy, s.config) for s in p.steps], "max err", err, "ref max", np.abs(ref).max(),
              "nan", np.isnan(got).sum())
