#!/usr/bin/env bash
# Warp-specialised wgmma tiles (einc issue 4): wgmma256x128ws / wgmma128x256ws (one producer
# warpgroup filling the ring with cp.async + mbarriers, consumer warpgroups on wgmma) against
# numpy on tests/test_mma.py's WS_CASES (grid capped at 2 blocks too: tiles walked per block),
# timed beside the current tiles and cuBLAS on 8192^3 fp16/bf16/tf32 NN and TN, racecheck and
# synccheck on small cases, the tensor-core GPU tests. Sections in the order that matters if
# the call runs out of time; long output under $OUT, a short line per section on stdout.
# (bash scripts/device_wgmma6.sh; WS_STEPS="cases time san tests ncu" picks sections)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
T0=$SECONDS
STEPS=${WS_STEPS:-cases time san tests ncu}
cat > /tmp/ws_cases.py <<'PY'
"""WS_CASES of tests/test_mma.py through the warp-specialised tiles (numpy in and out)."""
import os, sys
import numpy as np
sys.path.insert(0, "tests")
import einc
import einc.api
from einc.codegen.cuda import emit_wgmma
from einc.codegen.cuda.emit import emit_step
from oracle import assert_matches
from test_mma import TF32_EPS, WS_CASES, _data
tiles = os.environ.get("WS_TILES", "wgmma256x128ws,wgmma128x256ws").split(",")
grids = [int(g) for g in os.environ.get("WS_GRIDS", "0,2").split(",")]
cases = WS_CASES[:int(os.environ.get("WS_N", "99"))]
bad = ran = 0
for tile in tiles:
    emit_wgmma.choose_tile = lambda step, t=tile: t
    for g in grids:
        emit_wgmma.MAX_GRID = g or 2 ** 31 - 1
        for expr, shapes, dt, prec in cases:
            einc.api._EXECUTABLES.clear()
            p = einc.api.plan_for(expr, shapes, dt, backend="cuda", precision=prec, strategy="gett")
            assert any("einc_wgmma_gett_ws<" in emit_step(p, s, "sm_90").source for s in p.steps), expr
            rng = np.random.default_rng(len(expr) + sum(map(sum, shapes)))
            arrays = [_data(rng, s, dt) for s in shapes]
            kw = {"dtype": "int32"} if dt == "int8" else {}
            got = einc.einsum(expr, *arrays, backend="cuda", strategy="gett", precision=prec, **kw)
            lhs, rhs = expr.split("->")
            ext = dict(zip(lhs.replace(",", ""), sum(map(list, shapes), [])))
            k = int(np.prod([n for l, n in ext.items() if l not in rhs]))
            ran += 1
            try:
                wide = [a.astype(np.int32) for a in arrays] if kw else arrays  # int8 sums in int32
                assert_matches(np.asarray(got), expr, *wide, terms=max(k, 1), dtype=kw.get("dtype"),
                               product_eps=TF32_EPS if prec == "tf32" else 0.0)
            except AssertionError as e:
                bad += 1
                print("MISMATCH", tile, "grid", g, expr, shapes, dt, str(e)[:300])
print(f"{ran} einsums, {bad} wrong")
sys.exit(1 if bad else 0)
PY
cat > /tmp/ws_time.py <<'PY'
"""scripts/mma_tiles.py for several dtype/layout pairs in one process (TILES as there)."""
import sys
sys.path.insert(0, "scripts")
import mma_tiles
for arg in sys.argv[1:]:
    dt, expr = arg.split(":")
    sys.argv = ["mma_tiles.py", "8192", dt, expr]
    mma_tiles.main()
    sys.stdout.flush()
PY
cat > /tmp/ws_map.py <<'PY'
"""Sanitizer reports -> their distinct messages and the SASS instruction at each PC they name."""
import os, re, subprocess, sys
from collections import Counter
sys.path.insert(0, "tests")
import einc.api
from einc.codegen.cuda.emit import compile_options, emit_step
from einc.runtime.cuda import compile_cubin
from test_mma import WS_CASES
hits, msgs = Counter(), Counter()
for f in sys.argv[1:]:
    lines = open(f, errors="replace").read().splitlines()
    for i, l in enumerate(lines):
        m = re.search(r"at (?:0x)?([0-9a-fA-F]+) in (einc_\w+)", l) or re.search(r"(einc_\w+)\+0x([0-9a-fA-F]+)", l)
        if m:
            name, off = (m.group(2), m.group(1)) if l.find(" in einc_") >= 0 else (m.group(1), m.group(2))
            hits[(os.path.basename(f), name, int(off, 16))] += 1
        if re.search(r"Error|error detected|Race reported|hazard", l) and "SUMMARY" not in l:
            msgs[(os.path.basename(f), re.sub(r"0x[0-9a-f]+", "0x*", l.strip("= ").strip()))] += 1
for (f, m), n in msgs.most_common(12):
    print(f"{f}: {n}x {m[:180]}")
names = {n for _, n, _ in hits}
sass = {}
for tile in ("wgmma256x128ws", "wgmma128x256ws"):
    for expr, shapes, dt, prec in WS_CASES:
        p = einc.api.plan_for(expr, shapes, dt, backend="cuda", precision=prec, strategy="gett")
        for st in p.steps:
            k = emit_step(p, st, "sm_90", gett_tile=tile)
            if k.name in names and k.name not in sass:
                cub = compile_cubin(k.source, k.name, dict(compile_options("sm_90"), arch=k.arch or "sm_90"))
                open("/tmp/k.cubin", "wb").write(cub)
                sass[k.name] = subprocess.run(["cuobjdump", "--dump-sass", "/tmp/k.cubin"], capture_output=True,
                                              text=True).stdout.splitlines()
for (f, name, off), n in sorted(hits.items(), key=lambda x: -x[1])[:16]:
    at = [l.strip()[:90] for l in sass.get(name, []) if f"/*{off:04x}*/" in l]
    print(f"{f}: {n}x {name[-10:]}+0x{off:x}: {at[0] if at else '?'}")
PY
ok=1
if [[ $STEPS == *cases* ]]; then
  timeout 60 python3 /tmp/ws_cases.py > "$OUT/cases.txt" 2>&1
  rc=$?; [ $rc -ne 0 ] && ok=0
  echo "== cases rc=$rc ($((SECONDS-T0))s): $(grep -E 'einsums|MISMATCH|Error' "$OUT/cases.txt" | head -4 | cut -c1-200)"
fi
if [[ $STEPS == *time* ]]; then
  T=${TIME_TILES:-wgmma256x128,wgmma256x128ws,wgmma128x256,wgmma128x256ws}
  [ $ok -eq 0 ] && T=wgmma256x128,wgmma128x256  # a broken (or hung) ws kernel is not timed
  TC=${TIME_CASES:-"float16:ij,jk->ik bfloat16:ij,jk->ik float32:ik,jk->ij float16:ik,jk->ij float32:ij,jk->ik bfloat16:ik,jk->ij"}
  mkdir -p /tmp/sass  # mma_tiles writes each kernel's SASS under $OUT: not into this call's $OUT
  OUT=/tmp/sass TILES=$T timeout ${TIME_S:-95} python3 /tmp/ws_time.py $TC > "$OUT/time.txt" 2>&1
  echo "== time rc=$? ($((SECONDS-T0))s)"
  grep -E "cuBLAS .* ms|x cuBLAS|Error" "$OUT/time.txt" | sed -E 's/  smem [0-9]+//; s/rel.err/err/' | cut -c1-150
fi
if [[ $STEPS == *san* ]]; then
  for tool in racecheck synccheck; do
    WS_N=${SAN_N:-7} WS_GRIDS=2 timeout ${SAN_S:-30} compute-sanitizer --tool $tool --error-exitcode 9 \
      python3 /tmp/ws_cases.py > "$OUT/$tool.txt" 2>&1
    echo "== $tool rc=$? ($((SECONDS-T0))s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|einsums|MISMATCH' "$OUT/$tool.txt" | tr '\n' ' ' | cut -c1-200)"
  done
  if grep -qE "Race reported|error detected|Error:" "$OUT/racecheck.txt" "$OUT/synccheck.txt"; then
    timeout 40 python3 /tmp/ws_map.py "$OUT/racecheck.txt" "$OUT/synccheck.txt" > "$OUT/sanmap.txt" 2>&1
    echo "== sanitizer messages and PCs rc=$? ($((SECONDS-T0))s)"; cut -c1-200 "$OUT/sanmap.txt" | head -30
  fi
fi
if [[ $STEPS == *tests* ]]; then
  timeout ${TEST_S:-60} python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py > "$OUT/gpu-tests.txt" 2>&1
  echo "== tests rc=$? ($((SECONDS-T0))s): $(tail -1 "$OUT/gpu-tests.txt")"
  grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.txt" | cut -c1-200 | head -8
fi
if [[ $STEPS == *ncu* ]]; then
  cat > /tmp/ws_ncu.py <<'PY'
import sys, torch, einc
from einc.codegen.cuda import emit_wgmma
emit_wgmma.choose_tile = lambda step: sys.argv[1]
a, b = (torch.randn(8192, 8192, device="cuda", dtype=torch.float16) for _ in range(2))
for _ in range(2):
    einc.einsum("ij,jk->ik", a, b)
torch.cuda.synchronize()
PY
  M=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread
  for r in barrier long_scoreboard wait math_pipe_throttle dispatch_stall membar sleeping short_scoreboard mio_throttle lg_throttle no_instruction branch_resolving selected not_selected; do
    M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
  done
  for tile in ${NCU_TILES:-wgmma256x128ws wgmma256x128}; do
    timeout ${NCU_S:-40} ncu --clock-control none -k regex:einc_wgmma -s 1 -c 1 --metrics $M python3 /tmp/ws_ncu.py $tile \
      > "$OUT/ncu-$tile.txt" 2>&1
    echo "== ncu $tile rc=$? ($((SECONDS-T0))s)"
    grep -E "duration|pct|registers|stalled" "$OUT/ncu-$tile.txt" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//; s/  +/ /g' | tr '\n' ';' | cut -c1-600; echo
  done
fi
echo "done ($((SECONDS-T0))s)"
