"""Compile each kernel source under probe/ (dumped by `--dump` here) in a fresh process, on the
calling thread (EINC_NVRTC_THREAD=0) and on a big-stack thread (=1): which ones crash NVRTC.

    python3 scripts/nvrtc_probe.py --dump DIR     (anywhere: writes the smallmn cases' sources)
    python3 scripts/nvrtc_probe.py DIR            (on the device: compiles each, both ways)
"""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def dump(d):
    sys.path.insert(0, str(ROOT / "tests"))
    os.environ["EINC_SMALLMN"] = "1"
    from einc import api
    from einc.codegen.cuda import emit_smallmn
    from einc.codegen.cuda.emit import emit_step
    import test_smallmn as T
    emit_smallmn.K_MIN, emit_smallmn.MIN_SLICES = 0, 1
    d = pathlib.Path(d)
    d.mkdir(parents=True, exist_ok=True)
    cases = [(s, sh, dt) for s, sh, dt, _ in T.CASES] + [("abcd,dbea->ec", [(72,) * 4] * 2, "float32")]
    seen = set()
    for subs, shapes, dtype in cases:
        p = api.plan_for(subs, shapes, dtype, backend="cuda", strategy="gett")
        for s in p.steps:
            k = emit_step(p, s, "sm_90")
            if k.name not in seen:
                seen.add(k.name)
                (d / f"{k.name}.cu").write_text(k.source)
    print(len(seen), "sources")


CHILD = """
import sys, faulthandler; faulthandler.enable()
from einc.codegen.cuda.emit import compile_options
from einc.runtime.cuda import compile_cubin
src = open(sys.argv[1]).read()
print(len(compile_cubin(src, "probe", compile_options("sm_90"))))
"""


def probe(d):
    rows = []
    for f in sorted(pathlib.Path(d).glob("*.cu")):
        row = [f.stem]
        for mode in ("0", "1"):
            env = dict(os.environ, EINC_NVRTC_THREAD=mode, PYTHONPATH=os.environ.get("PYTHONPATH", "") + ":" + str(ROOT))
            r = subprocess.run([sys.executable, "-c", CHILD, str(f)], env=env, capture_output=True, text=True,
                               timeout=120)
            row.append(f"rc={r.returncode}" + ("" if r.returncode == 0 else " " + r.stderr.strip().splitlines()[-1][:80]))
        print(f"{row[0]:<44} thread=0: {row[1]:<40} thread=1: {row[2]}", flush=True)
        rows.append(row)
    return rows


if __name__ == "__main__":
    if sys.argv[1] == "--dump":
        dump(sys.argv[2])
    else:
        probe(sys.argv[1])
