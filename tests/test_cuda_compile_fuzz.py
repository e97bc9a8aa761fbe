"""Every CUDA kernel the random einsums need compiles with NVRTC (no GPU needed: CI runs it)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

pytest.importorskip("cuda.core")

from einc.api import _build  # noqa: E402
from einc.parse import parse  # noqa: E402
from test_differential import case_operands, einsums  # noqa: E402

_COMPILED: dict = {}


def compile_plan_steps(plan, arch="sm_90"):
    from einc.codegen.cuda.emit import compile_options, emit_step
    from einc.runtime.cuda import compile_cubin
    for step in plan.steps:
        k = emit_step(plan, step, arch)
        assert len(k.meta(list(range(1, len(k.tables) + 1)))) == k.meta_size
        if (k.key, arch) not in _COMPILED:
            _COMPILED[(k.key, arch)] = compile_cubin(k.source, k.name, compile_options(arch))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(einsums())
def test_random_einsums_compile_for_cuda(case):
    subscripts, strategy = case[0], case[4]
    ops = case_operands(case)
    plan = _build(parse(subscripts), ops, None, None, "K", "safe", "auto", None, strategy,
                  compile=False, backend="cuda")
    compile_plan_steps(plan)
