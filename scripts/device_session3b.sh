#!/usr/bin/env bash
# One device call: the GPU test suites (skinny, hardening, backend, graphs, tensor cores),
# both TCCG-24 suites with plots, the sanitizers. Usage (device, repo root):
#   bash scripts/device_session3b.sh
set -u
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu tests"
timeout 420 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_skinny.py tests/test_gpu_hardening.py \
  tests/test_cuda_backend.py tests/test_cuda_graphs.py tests/test_mma.py tests/test_cost_tune.py 2>&1 | tail -8
for dt in float32 bfloat16; do
  echo "== tccg24 $dt"
  timeout 300 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot 2>&1 | tail -27
done
echo "== sanitizers"
timeout 300 bash scripts/sanitize.sh
