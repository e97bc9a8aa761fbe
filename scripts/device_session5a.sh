#!/usr/bin/env bash
# Session 5, first device call: every GPU test at HEAD (the NVRTC-13.0-safe smallmn source and
# session 4's cached-path changes had not run on the H200), 72^5 beside torch, and Sycamore
# slice 0 step by step plus cotengra+CuPy on the same sliced tree. Long output -> $OUT.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
timeout 260 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_cuda_backend.py tests/test_mma.py \
  tests/test_gpu_complex.py tests/test_torch_integration.py tests/test_smallmn.py tests/test_skinny.py \
  tests/test_cuda_graphs.py > "$OUT/gpu-tests-par.txt" 2>&1
echo "par tests rc=$? $((SECONDS-t0))s"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests-par.txt" | cut -c1-220 | head -12; tail -1 "$OUT/gpu-tests-par.txt"
t0=$SECONDS
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_streams.py tests/test_gpu_hardening.py \
  tests/test_distributed.py tests/test_cost_tune.py > "$OUT/gpu-tests-ser.txt" 2>&1
echo "serial tests rc=$? $((SECONDS-t0))s"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests-ser.txt" | cut -c1-220 | head -8; tail -1 "$OUT/gpu-tests-ser.txt"
timeout 30 python3 scripts/case_bench.py float32 "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | tail -1 | cut -c1-200
timeout ${SYC_S:-200} python3 scripts/sycamore_bench.py --devices 0 --slices ${SLICES:-2} --anchor cupy --profile --top 30 \
  --json "$OUT/syc.json" > "$OUT/syc.txt" 2>&1
echo "syc rc=$?"; grep -E "einc|cotengra|slices|peak|total" "$OUT/syc.txt" | cut -c1-200 | tail -10
