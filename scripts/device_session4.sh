#!/usr/bin/env bash
# Session 4's closing device call: GPU tests of every kernel family and integration (streams,
# complex GEMM, smallmn included), einc.torch overhead split, `einc tune` on the TCCG-24 SIMT
# cases below 1x, the main GPU bench. Usage (device, repo root): bash scripts/device_session4.sh
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu tests"
timeout ${TEST_S:-300} python3 -m pytest -q -rf -m gpu -p no:cacheprovider tests/test_streams.py \
  tests/test_cuda_backend.py tests/test_torch_integration.py tests/test_skinny.py tests/test_mma.py \
  tests/test_cuda_graphs.py tests/test_gpu_plan_rewrites.py tests/test_cost_tune.py tests/test_gpu_complex.py \
  tests/test_smallmn.py tests/test_gpu_hardening.py tests/test_distributed.py 2>&1 | tee "$OUT/gpu-tests.txt" | tail -8
echo "== einc.torch overhead"; timeout 60 python3 scripts/torch_overhead.py 8
if [ "${TUNE:-1}" = 1 ]; then
  for c in "amji,cbkm->kjicba 24x24x20x24,20x20x20x24" "ap,srqp->srqa 96x96,84x84x84x96" \
           "lik,jkl->ji 384x384x384,376x384x384" "lki,jl->kji 384x376x384,376x384"; do
    set -- $c
    echo "== tune $1 fp32"; timeout 60 python3 -m einc tune "$1" --shapes "$2" --dtype float32 2>&1 | tail -14
  done
fi
if [ "${BENCH:-1}" = 1 ]; then
  echo "== main bench"; timeout 150 python3 -m einc bench --backend cuda 2>&1 | tail -16
fi
