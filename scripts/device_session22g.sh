#!/usr/bin/env bash
# Session 22, call g (closing): every GPU test, the sanitizers on the C-by-boxes kernel,
# TCCG-24 bf16 and fp32, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 60 python3 scripts/resident_b_case.py 2>&1 | tail -4
echo "--- sanitizers $((SECONDS-T0))s"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/box_sanitize_case.py 2>&1 | tail -2
done
echo "--- gpu tests $((SECONDS-T0))s"
TEST_S=230 source scripts/device_gpu_tests.sh
cp $OUT/gpu-tests.txt $OUT/results/gpu-tests-h200-20261204b.txt 2>/dev/null || (mkdir -p $OUT/results && cp $OUT/gpu-tests.txt $OUT/results/gpu-tests-h200-20261204b.txt)
echo "--- suites $((SECONDS-T0))s"
timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | tail -28
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -28
echo "--- main bench $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda 2>&1 | tail -25
echo "done $((SECONDS-T0))s"
