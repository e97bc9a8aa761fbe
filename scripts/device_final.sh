#!/usr/bin/env bash
# The session's closing device call: GPU tests of every kernel family, both TCCG-24 suites,
# the main GPU bench, the sanitizers. Usage (device, repo root): bash scripts/device_final.sh
set -u
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu tests"
timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_skinny.py tests/test_cuda_backend.py \
  tests/test_mma.py tests/test_cuda_graphs.py tests/test_gpu_plan_rewrites.py tests/test_cost_tune.py 2>&1 | tail -4
for dt in float32 bfloat16; do
  echo "== tccg24 $dt"
  timeout 200 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot 2>&1 | tail -5
done
echo "== main bench"
timeout 150 python3 -m einc bench --backend cuda 2>&1 | tail -16
echo "== sanitizers"
timeout 200 bash scripts/sanitize.sh 2>&1 | grep -E "==|SUMMARY|mismatches|rc="
