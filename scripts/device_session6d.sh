#!/usr/bin/env bash
# Session 6, closing call (einc issue 4): the warp-specialised wgmma tiles against numpy and
# under racecheck/synccheck (named barriers now non-aligned); every GPU test; the gett vector
# runs under racecheck at the default tiles (16-k slices); the main bench (fp32 SIMT, fp16,
# bf16, tf32, int8 GEMMs beside cuBLAS); TCCG-24 fp32 and bf16 with plots.
# (bash scripts/device_session6d.sh)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
T0=$SECONDS
WS_STEPS="cases san" bash scripts/device_wgmma6.sh 2>&1 | grep -v '^$' | cut -c1-220 | head -30
echo "== gett vector runs, racecheck ($((SECONDS-T0))s)"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 python3 scripts/gett_kvec_cases.py > "$OUT/gett-racecheck.txt" 2>&1
echo "rc=$? $(grep -E 'RACECHECK SUMMARY|einsums' "$OUT/gett-racecheck.txt" | tr '\n' ' ' | cut -c1-150)"
echo "== GPU tests ($((SECONDS-T0))s)"
source scripts/device_gpu_tests.sh
echo "== main bench ($((SECONDS-T0))s)"
timeout 150 python3 -m einc bench --backend cuda > "$OUT/main-bench.txt" 2>&1
echo "rc=$? ($((SECONDS-T0))s)"; grep -E 'TFLOP|TB/s|cuBLAS|cached|compile' "$OUT/main-bench.txt" | cut -c1-130
for dt in float32 bfloat16; do
  echo "== TCCG-24 $dt ($((SECONDS-T0))s)"
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > "$OUT/tccg-$dt.txt" 2>&1
  echo "rc=$? ($((SECONDS-T0))s)"; grep -E 'geomean|geometric|saved|Error' "$OUT/tccg-$dt.txt" | cut -c1-200 | tail -4
done
ls "$OUT/results"
