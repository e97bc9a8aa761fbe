#!/usr/bin/env bash
# Session 10, last call: the transpose as G 32x32 tiles per pass (measured slower than the 64x64 tiles: reverted) -- the GPU tests that run
# copies (backend, plan rewrites, hardening), the step breakdown, TCCG-24 bf16 and fp32.
# (bash scripts/device_session10h.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 70 python3 -m pytest -q -x -n 8 -m gpu -p no:cacheprovider tests/test_cuda_backend.py tests/test_gpu_plan_rewrites.py \
  tests/test_gpu_hardening.py > $OUT/tests.txt 2>&1
echo "== tests rc=$? $((SECONDS-T0))s: $(tail -1 $OUT/tests.txt)"; grep -E "^FAILED" $OUT/tests.txt | cut -c1-200 | head -5
timeout 25 python3 scripts/step_breakdown.py 2>&1 | grep -E "copy|whole|permute" | cut -c1-120
timeout 45 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot > /tmp/tccg-bf16.txt 2>&1
echo "== TCCG-24 bf16 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-bf16.txt)"
grep -E "ccsd |ao2mo" /tmp/tccg-bf16.txt | cut -c1-120 | head -14
timeout 40 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo" /tmp/tccg-fp32.txt | cut -c1-120 | head -14
echo "done $((SECONDS-T0))s"
