"""Sliced contraction of the frozen Sycamore amplitude network (53 qubits, 14 cycles).

The network (benchmarks/sycamore_n53_m14.json: 221 tensors, every extent 2, cotengra's
contraction path; random complex64 tensors of those shapes stand in for the gates) has an
unsliced peak of 2**40 elements (8 TiB). With a per-device bound it is sliced by einc and
run one slice block per task; beside it, in the same run, cotengra contracts the SAME
sliced tree (path and sliced indices) slice by slice with torch (or cupy) as its backend.

    python scripts/sycamore_bench.py --plan-only                  # planning only (CPU)
    python scripts/sycamore_bench.py --devices 0 --slices 8       # one GPU, 8 slices
    python scripts/sycamore_bench.py --devices 0,1,2,3 --slices 32 --json out.json

``--profile`` then times slice 0 step by step in this process (einc.einsum as the GPU
workers call it, and torch.einsum on the same tensors), so the steps that dominate show;
``--copy-intensity X`` sets plan.COPY_MIN_INTENSITY for a second einc pass (what-if).

``--devices 0,1,2,3`` also times ``--devices 0`` first, and reports strong scaling
E(N) = T(1) / (N T(N)). The default bound, 34.36 GB (SI) per device, is 32 GiB rounded up:
the 256-slice tree peaks at 2**35 + 30 696 bytes (two 2**31-element complex64 tensors live
at once, plus the operands), so exactly "32GiB" needs 512 slices. The recorded values
(the amplitude) of einc and cotengra agree only when every slice runs: with ``--slices N``
each sums its own first N slices.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NETWORK = ROOT / "benchmarks" / "sycamore_n53_m14.json"
DEFAULT_LIMIT = "34.36GB"


def load(path=NETWORK) -> dict:
    return json.loads(pathlib.Path(path).read_text())


def shapes(d):
    return [tuple(d["size_dict"][c] for c in t) for t in d["inputs"]]


def plan(d, memory_limit=DEFAULT_LIMIT, backend="cuda", slicer="auto"):
    """einc's SlicedPlan of the network on the file's frozen path (no data needed)."""
    from opt_einsum.paths import ssa_to_linear
    from einc.slicing import plan_sliced
    path = [tuple(c) for c in ssa_to_linear(d["unsliced"]["ssa_path"])]
    return plan_sliced((d["inputs"], d["output"]), shapes(d), memory_limit, dtype="complex64",
                       optimize=path, slicer=slicer, block=1, backend=backend)


def arrays(d, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes(d):
        x = rng.standard_normal(s) + 1j * rng.standard_normal(s)
        out.append((x / np.sqrt(2 * x.size ** 0.5)).astype(np.complex64))  # keep magnitudes tame
    return out


def time_einc(sp, ops, devices, slices):
    from einc import distributed as D
    client = D.client_for(devices)
    client.run(lambda: None)
    t0 = time.perf_counter()
    D.run(sp, ops, client, slices=min(2, slices))  # compiles every step's kernels (shared by all slices)
    t1 = time.perf_counter()
    result = D.run(sp, ops, client, slices=slices)
    t2 = time.perf_counter()
    return result, t2 - t1, t1 - t0


def time_cotengra(d, sp, ops, slices, backend):
    """cotengra contracting the same tree (path + sliced indices) slice by slice on device 0."""
    import cotengra as ctg
    name = dict(sp.labels)
    tree = ctg.ContractionTree.from_path(d["inputs"], d["output"], d["size_dict"],
                                         ssa_path=d["unsliced"]["ssa_path"])
    for s in sp.sliced:
        tree.remove_ind_(name[s])
    if backend == "torch":
        import torch
        dev = [torch.from_numpy(a).cuda() for a in ops]
        sync = torch.cuda.synchronize
    else:
        import cupy
        dev = [cupy.asarray(a) for a in ops]
        sync = cupy.cuda.Device().synchronize
    n = min(slices or tree.nslices, tree.nslices)
    tree.contract_slice(dev, 0, backend=backend)  # warm-up
    sync()
    t0 = time.perf_counter()
    total = 0
    for i in range(n):
        total = total + tree.contract_slice(dev, i, backend=backend)
    sync()
    return complex(total.item() if hasattr(total, "item") else total), time.perf_counter() - t0, n


def _letters(labels):
    """Per-step symbols as the letters torch.einsum takes (None when over 52)."""
    alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    names = {}
    for l in labels:
        names.setdefault(l, alpha[len(names)] if len(names) < len(alpha) else None)
    return None if None in names.values() else names


def _step_sizes(labels, res, ext):
    a, b, r = set(labels[0]), set(labels[1]), set(res)
    size = lambda s: int(np.prod([ext[c] for c in s])) if s else 1
    return {"M": size((a - b) & r), "N": size((b - a) & r), "K": size((a & b) - r), "batch": size(a & b & r)}


def slice_views(sp, ops, index=0):
    """The operands on the GPU (torch, in the plan's strides) and slice ``index``'s views of them."""
    import torch
    ext = dict(sp.extents)
    dev = [torch.as_strided(torch.from_numpy(a).cuda(), tuple(ext[c] for c in t), st)
           for a, t, st in zip(ops, sp.terms, sp.in_strides)]
    value = dict(zip(sp.sliced, sp.slice_index(index)))
    return [v[tuple(value.get(c, slice(None)) for c in t) + (Ellipsis,)] for v, t in zip(dev, sp.terms)]


def profile_slice(sp, ops, repeats=2, copy_intensity=None):
    """Slice 0, one pairwise step at a time on the GPU: einc.einsum (as the workers run it)
    and torch.einsum on the same tensors; seconds per step, min of ``repeats`` after a warm-up."""
    import torch
    import einc
    from einc import api, plan as P
    torch.cuda.empty_cache()  # cotengra's cached blocks
    from einc.distributed import pairwise_steps
    ext = dict(sp.extents)
    views = slice_views(sp, ops)
    steps = pairwise_steps(sp)

    def timed(fn):
        best = float("inf")
        for _ in range(repeats + 1):  # the first call compiles / warms up
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            r = fn()
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t0)
        return r, best

    passes = [("einc", None)] + ([("einc_copies", copy_intensity)] if copy_intensity is not None else [])
    rows = [dict(step=n, **_step_sizes(labels, res, ext)) for n, (_, labels, res) in enumerate(steps)]
    for name, ci in passes + [("torch", None)]:
        old = P.COPY_MIN_INTENSITY
        if ci is not None:
            P.COPY_MIN_INTENSITY = ci
            api._EXECUTABLES.clear()
        tensors, n = dict(enumerate(views)), len(views)
        try:
            for row, (ids, labels, res) in zip(rows, steps):
                args = [tensors.pop(i) if i >= len(views) else tensors[i] for i in ids]
                if name == "torch":
                    L = _letters([c for lab in labels for c in lab] + list(res))
                    if L is None:
                        r, secs = timed(lambda: einc.einsum(*[x for a, lab in zip(args, labels) for x in (a, lab)],
                                                            res, optimize=[tuple(range(len(ids)))]))
                        secs = None
                    else:
                        eq = ",".join("".join(L[c] for c in lab) for lab in labels) + "->" + "".join(L[c] for c in res)
                        try:
                            r, secs = timed(lambda: torch.einsum(eq, *args))
                        except RuntimeError:  # torch's 25-dimension limit: einc's result carries on
                            r, secs = timed(lambda: einc.einsum(*[x for a, lab in zip(args, labels) for x in (a, lab)],
                                                                res, optimize=[tuple(range(len(ids)))]))
                            secs = None
                else:
                    known = len(api._EXECUTABLES.data)
                    r, secs = timed(lambda: einc.einsum(*[x for a, lab in zip(args, labels) for x in (a, lab)],
                                                        res, optimize=[tuple(range(len(ids)))]))
                    ex = list(api._EXECUTABLES.data.values())[known:]  # this step's, when it is new
                    if ex and hasattr(ex[-1], "plan") and name == "einc":
                        row["einc_kernels"] = [f"{s.strategy}:{next((c[1] for c in s.config if isinstance(c, tuple) and c[:1] == ('tile',)), '')}"
                                               for s in ex[-1].plan.steps]
                row[name] = secs
                tensors[n] = r
                n += 1
                del args, r
        finally:
            P.COPY_MIN_INTENSITY = old
        del tensors
        torch.cuda.empty_cache()
    totals = {name: sum(r[name] or 0.0 for r in rows) for name, _ in passes + [("torch", None)]}
    return totals, rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--network", default=str(NETWORK))
    p.add_argument("--memory-limit", default=DEFAULT_LIMIT, help="per device")
    p.add_argument("--devices", default="0", help="GPU ordinals (0,1,2,3) or cpu,cpu")
    p.add_argument("--slices", type=int, default=None, help="run only the first N slices")
    p.add_argument("--anchor", default="torch", choices=["torch", "cupy", "none"])
    p.add_argument("--plan-only", action="store_true")
    p.add_argument("--profile", action="store_true", help="time slice 0 step by step (einc, torch.einsum)")
    p.add_argument("--copy-intensity", type=float, default=None,
                   help="with --profile: a second einc pass with plan.COPY_MIN_INTENSITY set to this")
    p.add_argument("--top", type=int, default=25, help="with --profile: steps listed")
    p.add_argument("--json", default=None, help="write the record here")
    args = p.parse_args(argv)
    d = load(args.network)
    devices = [x if x == "cpu" else int(x) for x in args.devices.split(",")]
    backend = "cpu" if all(x == "cpu" for x in devices) else "cuda"
    t = time.perf_counter()
    sp = plan(d, args.memory_limit, backend)
    rec = {"network": d["source"], "memory_limit": args.memory_limit, "nslices": sp.nslices,
           "sliced": [dict(sp.labels)[s] for s in sp.sliced], "peak_bytes": sp.peak_bytes,
           "overhead_flops": sp.overhead_flops, "flops_unsliced": sp.flops,
           "plan_seconds": time.perf_counter() - t, "devices": args.devices}
    print(sp.describe())

    def save():  # after every phase: a run cut short keeps what it measured
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(rec, indent=1))
    save()
    if not args.plan_only:
        ops = arrays(d)
        n = min(args.slices or sp.nslices, sp.nslices)
        rec["slices_run"] = n
        runs = {}
        for devs in ([devices[:1], devices] if len(devices) > 1 else [devices]):
            r, secs, first = time_einc(sp, ops, devs, n)
            runs[len(devs)] = secs
            rec[f"einc_{len(devs)}dev"] = {"seconds": secs, "per_slice": secs / n, "first_pass_2_slices": first,
                                           "value": [float(np.real(r)), float(np.imag(r))]}
            print(f"einc {len(devs)} device(s): {n} slices in {secs:.3f} s ({secs / n * 1e3:.1f} ms/slice)")
            save()
        from einc import distributed as D
        D._close_clusters()  # the workers' GPU memory back before cotengra and the profile run here
        if len(runs) > 1:
            N = len(devices)
            rec["strong_scaling_E"] = runs[1] / (N * runs[N])
            print(f"E({N}) = T(1)/(N T(N)) = {rec['strong_scaling_E']:.3f}")
        if args.anchor != "none" and backend == "cuda":
            try:
                v, secs, m = time_cotengra(d, sp, ops, n, args.anchor)
            except Exception as e:  # recorded, not fatal: the profile still runs
                rec[f"cotengra_{args.anchor}"] = {"error": f"{type(e).__name__}: {e}"[:400]}
                print(f"cotengra+{args.anchor} failed: {rec[f'cotengra_{args.anchor}']['error']}")
            else:
                rec[f"cotengra_{args.anchor}"] = {"seconds": secs, "per_slice": secs / m, "value": [v.real, v.imag]}
                print(f"cotengra+{args.anchor}: {m} slices in {secs:.3f} s ({secs / m * 1e3:.1f} ms/slice)")
            save()
        if args.profile and backend == "cuda":
            totals, rows = profile_slice(sp, ops, copy_intensity=args.copy_intensity)
            rec["profile_slice0"] = {"totals": totals, "steps": sorted(rows, key=lambda r: -(r["einc"] or 0))}
            print("slice 0 step by step: " + ", ".join(f"{k} {v:.3f} s" for k, v in totals.items()))
            for r in rec["profile_slice0"]["steps"][:args.top]:
                print(f"  step {r['step']:3d} M={r['M']} N={r['N']} K={r['K']} b={r['batch']}: "
                      + ", ".join(f"{k} {r[k] * 1e3:.2f} ms" for k, _ in totals.items() if r.get(k) is not None)
                      + f"  [{' '.join(r.get('einc_kernels', []))}]")
    save()
    return rec


if __name__ == "__main__":
    main()
