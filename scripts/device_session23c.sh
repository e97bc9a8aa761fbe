#!/usr/bin/env bash
# Session 23, call c: every GPU test (now with test_wgmma_streamk.py) and the sanitizers on the
# 256x128ws stream-K tail.
set -u
source scripts/device_env.sh
T0=$SECONDS
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_sanitize_case.py 2>&1 | tail -3
done
echo "--- gpu tests $((SECONDS-T0))s"
TEST_S=300 source scripts/device_gpu_tests.sh
mkdir -p $OUT/results && cp $OUT/gpu-tests.txt $OUT/results/gpu-tests-h200-20261204c.txt
echo "done $((SECONDS-T0))s"
