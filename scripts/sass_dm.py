"""SASS of a DM gett kernel (GPU machine: NVRTC + cuobjdump): opcode counts of the whole
kernel and the main loop's body, the full listing to $OUT/sass-<tile>.txt.

    EINC_GETT_BIG_TILE=64x128x16d python3 scripts/sass_dm.py 'ij,jk->ik' 4096
"""
import collections, os, re, subprocess, sys

from cuda.core import Program, ProgramOptions

import einc.api
from einc.codegen.cuda.emit import compile_options, emit_step

subs, n = sys.argv[1], int(sys.argv[2])
shapes = [(n, n), (n, n)]
p = einc.api.plan_for(subs, shapes, "float32", backend="cuda", strategy="gett")
tile = os.environ.get("EINC_GETT_BIG_TILE", "64x128x16d")
k = emit_step(p, p.steps[0], gett_tile=tile)
obj = Program(k.source, "c++", ProgramOptions(**compile_options("sm_90"))).compile("cubin")
path = f"/tmp/{tile}.cubin"
open(path, "wb").write(bytes(obj.code))
sass = subprocess.run(["cuobjdump", "--dump-sass", path], capture_output=True, text=True).stdout
out = os.environ.get("OUT", "/tmp")
open(f"{out}/sass-{tile}.txt", "w").write(sass)
ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)]
print(tile, "instructions", len(ops))
print(collections.Counter(o.split(".")[0] for o in ops).most_common(25))
