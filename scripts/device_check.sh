#!/usr/bin/env bash
# Everything the GPU issue checks, in one device call: GPU tests, benchmark, sanitizers.
# Usage on the device machine (from the repo root): bash scripts/device_check.sh [quick]
set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
export EINC_CACHE_DIR=/tmp/einc-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu tests"
timeout 400 python3 -m pytest -q -m gpu tests/test_cuda_backend.py -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 | tail -25
[ "${1:-}" = quick ] && exit 0
echo "== bench"
timeout 300 python3 -m einc bench --backend cuda 2>&1 | tail -20
echo "== sanitizers"
timeout 300 bash scripts/sanitize.sh
