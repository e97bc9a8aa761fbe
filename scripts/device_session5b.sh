#!/usr/bin/env bash
# Session 5, second device call: the GPU tests after the permute kernel (mode-set tiles),
# aligned sums and outermost-first split cuts; then Sycamore slices with the CuPy anchor and
# slice 0 step by step. Long output -> $OUT; a short summary printed.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
t0=$SECONDS
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_cuda_backend.py tests/test_mma.py \
  tests/test_gpu_complex.py tests/test_torch_integration.py tests/test_smallmn.py tests/test_skinny.py \
  tests/test_cuda_graphs.py tests/test_gpu_hardening.py tests/test_distributed.py tests/test_cost_tune.py \
  tests/test_gpu_plan_rewrites.py > "$OUT/gpu-tests.txt" 2>&1
echo "tests rc=$? $((SECONDS-t0))s"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.txt" | cut -c1-220 | head -12; tail -1 "$OUT/gpu-tests.txt"
timeout ${SYC_S:-240} python3 scripts/sycamore_bench.py --devices 0 --slices ${SLICES:-4} --anchor cupy --profile --top 40 \
  --json "$OUT/syc.json" > "$OUT/syc.txt" 2>&1
echo "syc rc=$?"; grep -vE "^  step" "$OUT/syc.txt" | grep -E "einc|cotengra|slices|peak|Error|error" | cut -c1-200 | tail -8
grep -E "^  step" "$OUT/syc.txt" | head -14 | cut -c1-160
