"""Split-K on the GPU is a plan rewrite (partial GEMMs over K slices + a reduce step).

The rewritten plan is run here on the CPU executor, which takes any plan, so CI checks
the rewrite's arithmetic without a GPU; tests/test_cuda_backend.py runs it on the GPU.
"""
from __future__ import annotations

import numpy as np
import pytest

from einc.api import plan_for
from einc.execute import Executable
from einc.plan import KSlice
from oracle import assert_matches


@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(64, 8192), (8192, 64)]),
    ("lki,kjl->ji", [(64, 64, 200), (64, 150, 64)]),
    ("abcd,dbea->ec", [(24, 36, 40, 24), (24, 36, 48, 24)]),
])
def test_split_k_plan_is_correct(subs, shapes):
    plan = plan_for(subs, shapes, "float32", backend="cuda")
    assert [s.strategy for s in plan.steps] == ["gett", "reduce"]
    assert any(isinstance(m.label, KSlice) and m.kind == "batch" for m in plan.steps[0].modes)
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    Executable(plan)(ops, out)
    k = int(np.prod([m.extent for m in plan.steps[0].modes if m.kind in ("k", "batch")]))
    assert_matches(out, subs, *ops, terms=k)


def test_no_split_when_output_fills_the_gpu_or_k_is_short():
    assert len(plan_for("ij,jk->ik", [(4096, 4096), (4096, 4096)], "float32", backend="cuda").steps) == 1
    assert len(plan_for("ij,jk->ik", [(64, 512), (512, 64)], "float32", backend="cuda").steps) == 1
    assert len(plan_for("ij,jk->ik", [(64, 8192), (8192, 64)], "float32").steps) == 1  # CPU plan
    assert len(plan_for("ij,jk->ik", [(64, 8191), (8191, 64)], "float32", backend="cuda").steps) == 1  # prime K
