#!/usr/bin/env bash
# Session 5: GPU tests after the pool threshold, skinny's N-fast staging and the grown permute
# tiles; per-kernel times of slice 0's big steps; Sycamore slices against cotengra+CuPy.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
t0=$SECONDS
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_cuda_backend.py tests/test_mma.py \
  tests/test_gpu_complex.py tests/test_torch_integration.py tests/test_smallmn.py tests/test_skinny.py \
  tests/test_cuda_graphs.py tests/test_gpu_hardening.py tests/test_distributed.py tests/test_gpu_plan_rewrites.py \
  > "$OUT/gpu-tests.txt" 2>&1
echo "tests rc=$? $((SECONDS-t0))s"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.txt" | cut -c1-220 | head -12; tail -1 "$OUT/gpu-tests.txt"
timeout 150 python3 scripts/syc_kernels.py ${TOP:-12} "$OUT/kernels.json" > "$OUT/kernels.txt" 2>&1
echo "kernels rc=$?"; grep -E "^step|wall|Error" "$OUT/kernels.txt" | cut -c1-200 | head -14
timeout ${SYC_S:-200} python3 scripts/sycamore_bench.py --devices 0 --slices ${SLICES:-8} --anchor cupy \
  --json "$OUT/syc.json" > "$OUT/syc.txt" 2>&1
echo "syc rc=$?"; grep -E "einc|cotengra|slices|peak|Error|error" "$OUT/syc.txt" | cut -c1-200 | tail -6
