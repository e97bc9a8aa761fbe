"""Which kernel choices a change moves: every CUDA plan's steps (strategy, config, the kernel
the emitter picks and its grid) for the TCCG-24 cases, the main bench's and random two-operand
contractions, made by the tree at REV and by the working tree, on a device named (no GPU
needed: the name and SM count are set), and the plans that differ.

    python scripts/choice_diff.py HEAD~1 [--device "NVIDIA H100 80GB HBM3"] [--sms 132] [--random 600] [--seed 7]

For a cost-model change: a choice it moves is one to measure before trusting (benchmarks/NOTES.md,
session 34).
"""
import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [1, 2, 8, 16, 24, 32, 48, 72, 96, 128, 256, 500, 1024, 2048, 4096]


def random_cases(n, seed):
    """Two-operand contractions with batch, M, N and K groups of one or two modes, every
    operand's labels shuffled, no operand over 2^28 elements."""
    rng, out = random.Random(seed), []
    for _ in range(n):
        labels = rng.sample("abcdefgh", 8)
        nb, nm, nn, nk = rng.choice([0, 0, 1]), rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 2)
        cut = [nb, nb + nm, nb + nm + nn, nb + nm + nn + nk]
        b, m, n_, k = labels[:cut[0]], labels[cut[0]:cut[1]], labels[cut[1]:cut[2]], labels[cut[2]:cut[3]]
        ext = {l: rng.choice(SIZES) for l in b + m + n_ + k}
        ops = [b + m + k, b + k + n_, b + m + n_]
        for o in ops:
            rng.shuffle(o)
        size = lambda o: math.prod(ext[l] for l in o)
        if max(size(o) for o in ops) <= 2 ** 28:
            out.append((f"{''.join(ops[0])},{''.join(ops[1])}->{''.join(ops[2])}",
                        [[ext[l] for l in ops[0]], [ext[l] for l in ops[1]]],
                        rng.choice(["float32", "bfloat16", "float16", "float64"])))
    return out


def dump(args):
    import einc.cost as cost
    if hasattr(cost, "as_device"):
        cost.as_device(args.device, args.sms).__enter__()  # (held for the process)
    else:  # a tree from before session 34
        cost.device_name, cost.device_sms = (lambda: args.device), (lambda: args.sms)
    from einc import api
    from einc.bench_cuda import case_geometry, load_tccg24
    from einc.codegen.cuda.emit import emit_step
    cases = [(subs, case_geometry(subs, sizes, 4)["shapes"], dt) for _, _, subs, sizes, _, _ in load_tccg24()
             for dt in ("float32", "bfloat16", "float16")]
    cases += [("ij,jk->ik", [(n, n)] * 2, dt) for n in (4096, 8192) for dt in ("float32", "bfloat16", "float16")]
    cases += [("ij,ij->i", [(16384, 16384)] * 2, "float32"), ("abcd,dbea->ec", [(72,) * 4] * 2, "float32")]
    cases += random_cases(args.random, args.seed)
    out = {}
    for subs, shapes, dtype in cases:
        try:
            p = api.plan_for(subs, [tuple(s) for s in shapes], dtype, backend="cuda")
            kernels = [(s, emit_step(p, s)) for s in p.steps]
            sig = " | ".join(f"{s.text}: {s.strategy} {s.config} {k.name} grid {tuple(k.grid)}" for s, k in kernels)
        except Exception as e:  # (a plan one tree refuses is a difference too)
            sig = f"error {type(e).__name__}: {e}"
        out[f"{dtype} {subs} {shapes}"] = sig
    json.dump(out, open(args.dump, "w"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rev", nargs="?", default="HEAD")
    ap.add_argument("--device", default="NVIDIA H200")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--random", type=int, default=600)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dump:
        return dump(args)
    tmp = tempfile.mkdtemp(prefix="einc-choice-diff-")
    old_tree = os.path.join(tmp, "tree")
    subprocess.run(["git", "-C", HERE, "worktree", "add", "-q", "--detach", old_tree, args.rev], check=True)
    try:
        sigs = []
        for tree in (old_tree, HERE):
            path = os.path.join(tmp, f"{len(sigs)}.json")
            subprocess.run([sys.executable, os.path.abspath(__file__), "--dump", path, "--device", args.device,
                            "--sms", str(args.sms), "--random", str(args.random), "--seed", str(args.seed)],
                           check=True, cwd=tree,  # (an empty cache: no tuned winner hides a choice)
                           env={**os.environ, "PYTHONPATH": tree, "EINC_CACHE_DIR": os.path.join(tmp, "cache")})
            sigs.append(json.load(open(path)))
    finally:
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", old_tree], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    old, new = sigs
    moved = [k for k in old if old[k] != new.get(k)]
    print(f"{args.device} ({args.sms} SMs): {len(moved)} of {len(old)} plans differ between {args.rev} and the working tree")
    for k in moved:
        print(f"  {k}\n    {args.rev}: {old[k]}\n    now: {new[k]}")


if __name__ == "__main__":
    main()
