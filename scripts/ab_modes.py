"""Interleaved A/B of kernel switches on the GPU, in one process (one thermal state for all).

    python3 scripts/ab_modes.py MODULE.ATTR V1,V2,... DTYPE 'EXPR:a=..,b=..' ...
    python3 scripts/ab_modes.py env.EINC_SKINNY 1,0 ...   (an environment switch read per plan)

For each case, ROUNDS (env, 6) rounds; in each, every value of the switch (the plan rebuilt:
executables cleared) and torch.einsum are timed one after another (CUDA events, median of
20 x 5 calls, inputs rotated past L2), the order rotated by one each round so that no value
always runs last in a round (the card's clock drifts within one). Prints per value the median over rounds, in ms, and
the median of its per-round ratio to torch.einsum (> 1: einc faster).
"""
import importlib
import os
import statistics
import sys

import torch

import einc
from einc.bench_cuda import _events_median, _rotations, case_geometry

target, values, dtype, *cases = sys.argv[1:]
mod_name, attr = target.rsplit(".", 1)
mod = None if mod_name == "env" else importlib.import_module(mod_name)
values = values.split(",")
tdt = getattr(torch, dtype)
rounds = int(os.environ.get("ROUNDS", "6"))
for arg in cases:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    geo = case_geometry(subs, sizes, torch.empty((), dtype=tdt).element_size())
    sets = _rotations(torch, lambda: [torch.randn(s, device="cuda").to(tdt) for s in geo["shapes"]], geo["bytes"])
    ms = {v: [] for v in values + ["torch"]}
    ratio = {v: [] for v in values}
    order = ["torch"] + values
    for r in range(rounds):
        got = {}
        for v in order[r % len(order):] + order[:r % len(order)]:
            if v == "torch":
                got[v] = _events_median(torch, lambda i: torch.einsum(subs, *sets[i % len(sets)]))[0]
                continue
            if mod is None:
                os.environ[attr] = v
            else:
                cur = getattr(mod, attr)  # (a bool switch: "0" is False, as bool("0") is not)
                setattr(mod, attr, v if isinstance(cur, str) else v not in ("0", "False", "") if isinstance(cur, bool)
                        else type(cur)(v))
            einc.api._EXECUTABLES.clear()
            got[v] = _events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]))[0]
        for v in order:
            ms[v].append(got[v])
        for v in values:
            ratio[v].append(got["torch"] / got[v])
    print(f"{dtype} {arg}")
    for v in values + ["torch"]:
        line = f"  {attr}={v:<8} {1e3 * statistics.median(ms[v]):8.3f} ms"
        if v != "torch":
            line += f"  x torch {statistics.median(ratio[v]):.3f}  rounds " + " ".join(f"{x:.3f}" for x in ratio[v])
        print(line)
