#!/usr/bin/env bash
# Session 21, call k: every GPU test with the DM default (fp32 gett on the fp64 tensor cores).
#   (bash scripts/device_session21k.sh; the log to $OUT/gpu-tests-h200-20261204a.txt)
set -u
source scripts/device_env.sh
T0=$SECONDS
TEST_S=420 source scripts/device_gpu_tests.sh
cp $OUT/gpu-tests.txt $OUT/gpu-tests-h200-20261204a.txt 2>/dev/null
echo "done $((SECONDS-T0))s"
