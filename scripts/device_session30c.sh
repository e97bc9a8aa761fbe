#!/usr/bin/env bash
# Session 30, call c: every GPU test file on today's tree (session 29's SM-count and cluster-grid
# changes had run only the wgmma files on a GPU), then the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
TEST_S=330 source scripts/device_gpu_tests.sh
echo "--- bench $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
timeout 200 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "done $((SECONDS-T0))s"
