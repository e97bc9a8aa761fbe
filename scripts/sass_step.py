"""SASS of one einsum step's kernel, without a GPU (NVRTC cubin + cuobjdump): the opcode
counts of the whole kernel and of its innermost loop, registers and spills.

    python3 scripts/sass_step.py 'bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' [bfloat16] [step]

cuobjdump / nvdisasm come from $CUOBJDUMP / $NVDISASM, the PATH, or .tools/ (unpacked from
the wheels `pip download nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` fetch). The listing goes to $OUT/sass-step.txt.
"""
import collections, os, re, shutil, subprocess, sys

from cuda.core import Program, ProgramOptions

import einc.api
from einc.bench_cuda import case_geometry
from einc.codegen.cuda.emit import compile_options, emit_step

arg = sys.argv[1]
dtype = sys.argv[2] if len(sys.argv) > 2 else "float32"
idx = int(sys.argv[3]) if len(sys.argv) > 3 else -1
subs, sz = arg.split(":")
sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
shapes = case_geometry(subs, sizes, 4)["shapes"]
p = einc.api.plan_for(subs, shapes, dtype, backend="cuda")
step = p.steps[idx]
k = emit_step(p, step, "sm_90", gett_tile=os.environ.get("EINC_SASS_TILE"))
arch = k.arch or "sm_90"
opts = compile_options(arch)
obj = Program(k.source, "c++", ProgramOptions(**opts)).compile("cubin")
path = "/tmp/einc-sass-step.cubin"
open(path, "wb").write(bytes(obj.code))
tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump") or ".tools/cuobjdump"
sass = subprocess.run([tool, "--dump-sass", path], capture_output=True, text=True).stdout
if "/*0000*/" not in sass:  # cuobjdump 13.5 lists NVRTC 13.0's cubins empty: nvdisasm reads them
    dis = os.environ.get("NVDISASM") or shutil.which("nvdisasm") or ".tools/nvdisasm"
    sass = subprocess.run([dis, "-c", path], capture_output=True, text=True).stdout
res = subprocess.run([tool, "--dump-resource-usage", path], capture_output=True, text=True).stdout
out = os.environ.get("OUT", "/tmp")
open(f"{out}/sass-step.txt", "w").write(sass)
print(k.name, k.key, "grid", k.grid, "block", k.block, "smem", k.smem)
print(re.sub(r"\s+", " ", " ".join(l for l in res.splitlines() if "REG" in l)))
ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)]
print("instructions", len(ops))
print(collections.Counter(o.split(".")[0] for o in ops).most_common(30))
