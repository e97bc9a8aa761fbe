#!/usr/bin/env bash
# Session 23, call d (closing): TCCG-24 bf16 and fp32, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
# racecheck's report on the 256x128ws tail (call c: 8 hazards) beside the same tile walking
# tiles on a capped grid without stream-K
for sk in 1 0; do
  echo "racecheck EINC_WGMMA_STREAMK=$sk"
  EINC_WGMMA_STREAMK=$sk timeout 60 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/sk_sanitize_case.py 2>&1 \
    | grep -E "SUMMARY|Write|Read|at .*einc" | sort | uniq -c | head -8
done
echo "--- suites $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | tail -28
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -28
echo "--- main bench $((SECONDS-T0))s"
timeout 140 python3 -m einc bench --backend cuda 2>&1 | tail -16
echo "done $((SECONDS-T0))s"
