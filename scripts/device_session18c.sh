#!/usr/bin/env bash
# Session 18, call c: every GPU test (8 workers; the ws1p resident-operand producer, the
# swizzled stream_mma staging and the tuned two-mode split among them), then the main bench.
#   (bash scripts/device_session18c.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
TEST_S=300 source scripts/device_gpu_tests.sh
timeout 200 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$? ($((SECONDS-T0))s)"; tail -24 /tmp/main.txt | cut -c1-140
echo "done $((SECONDS-T0))s"
