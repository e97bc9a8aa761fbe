"""Compare the PTX of einc's kernels between two trees, without a GPU (NVRTC only):

    python3 scripts/ptx_compare.py OTHER_TREE [CASE ...]

For each case (default: the mma tiles and TCCG ccsd_t's stream kernels) it prints the
number of PTX instructions here and in OTHER_TREE (a checkout, e.g. `git archive REV | tar
-x -C /tmp/rev`) and the instructions that differ, with register numbers and labels
normalised, so a refactor can be checked for what it changed in the generated code.
"""
import json
import re
import subprocess
import sys
from collections import Counter

CASES = [
    ("ij,jk->ik", "i=1024,j=1024,k=1024", "bfloat16", "mma128x128"),
    ("ij,jk->ik", "i=1024,j=1024,k=1024", "float16", "mma64x64"),
    ("ij,kj->ik", "i=1024,j=1024,k=1024", "int8", "mma128x256"),
    ("amji,cbkm->kjicba", "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "float32", ""),
    ("amji,cbkm->kjicba", "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "bfloat16", ""),
]

_CHILD = r"""
import json, re, sys
import einc.api
from cuda.bindings import nvrtc
from einc.codegen.cuda.emit import emit_step
subs, sizes, dtype, tile = json.loads(sys.argv[1])
ext = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sizes.split(",")}
shapes = [tuple(ext[l] for l in t) for t in subs.split("->")[0].split(",")]
p = einc.api.plan_for(subs, shapes, dtype, backend="cuda")
k = emit_step(p, p.steps[-1], gett_tile=tile or None)
err, prog = nvrtc.nvrtcCreateProgram(k.source.encode(), b"k.cu", 0, [], [])
opts = [b"--gpu-architecture=compute_90", b"-std=c++17", b"-default-device"]
assert nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS
err, n = nvrtc.nvrtcGetPTXSize(prog)
buf = b" " * n
nvrtc.nvrtcGetPTX(prog, buf)
ops = []
for line in buf.decode().splitlines():
    t = line.strip()
    if t and not t.startswith(("//", ".", "{", "}", "$L", ")", "(")):
        ops.append(re.sub(r"%(r|rd|f|p|rs|fd|h)\d+", "%R", t).split()[0].rstrip(";"))
print(json.dumps(ops))
"""


def ptx_ops(tree: str, case) -> list:
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(case)], cwd=tree, capture_output=True,
                         text=True, env={"PYTHONPATH": tree, "PATH": "/usr/bin:/bin"})
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout)


def main(argv) -> None:
    other = argv[0]
    cases = [tuple(c.split(":")) for c in argv[1:]] or CASES
    for case in cases:
        here, there = Counter(ptx_ops(".", case)), Counter(ptx_ops(other, case))
        diff = {op: here[op] - there[op] for op in here | there if here[op] != there[op]}
        print(f"{case[0]} {case[2]} {case[3] or '(plan)'}: {sum(there.values())} -> {sum(here.values())} "
              f"PTX instructions; differing: {diff or 'none'}")


if __name__ == "__main__":
    main(sys.argv[1:])
