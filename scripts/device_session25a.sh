#!/usr/bin/env bash
# Session 25, call a: the GPU tests the TMA rows copy and the GEMM-order copies touch,
# memcheck on copy_tma, then TCCG-24 bf16 and fp32 and the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_copy_tma.py tests/test_mma.py tests/test_gpu_plan_rewrites.py 2>&1 | tail -4
echo "--- memcheck $((SECONDS-T0))s"
timeout 90 compute-sanitizer --tool memcheck python3 scripts/copy_tma_sanitize_case.py 2>&1 | grep -v Warn | tail -16
echo "--- suites $((SECONDS-T0))s"
timeout 130 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | tail -28
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -28
echo "done $((SECONDS-T0))s"
