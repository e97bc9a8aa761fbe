#!/usr/bin/env bash
# Session 5's last device call: GPU tests at HEAD, compute-sanitizer on the new kernels
# (permute, aligned sums, skinny's N-fast stores), the unmeasured smallmn switches on 72^5,
# and TCCG-24 fp32 (--plot). Long output -> $OUT, a short summary printed.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
source scripts/device_gpu_tests.sh
for tool in memcheck racecheck; do
  EINC_SANITIZE_ONLY=new timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/cuda_sanitize_cases.py \
    > "$OUT/sanitize-$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E 'einsums|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.txt" | tr '\n' ' ')"
done
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
best="" ; best_ms=999
v() {
  line=$(env "$@" timeout 40 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1)
  echo "$* | $(echo "$line" | cut -c40-160)"
  ms=$(echo "$line" | awk '{print $3}')
  if python3 -c "import sys; sys.exit(not (float('$ms') < float('$best_ms')))" 2>/dev/null; then best="$*"; best_ms=$ms; fi
}
v EINC_SMALLMN=1
v EINC_SMALLMN_BK=64
v EINC_SMALLMN_MINB=1 EINC_SMALLMN_QU=8
v EINC_SMALLMN_OCTETS=1
v EINC_SMALLMN_OCTETS=1 EINC_SMALLMN_BK=64
echo "best: $best ($best_ms ms)"
env $best timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py > "$OUT/smallmn-best.txt" 2>&1
echo "smallmn tests with the best: rc=$? $(tail -1 "$OUT/smallmn-best.txt")"
timeout 200 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > "$OUT/tccg-fp32.txt" 2>&1
echo "tccg rc=$?"; grep -iE "geometric|geomean" "$OUT/tccg-fp32.txt" | tail -2 | cut -c1-200
ls "$OUT/results" 2>/dev/null | head
