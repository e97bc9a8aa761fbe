#!/usr/bin/env bash
# Session 10, closing call: the 64x64 transpose tiles (scripts/step_breakdown.py), TCCG-24
# bf16 and fp32 with their plots, the main bench (GEMMs against cuBLAS), every GPU test.
# (bash scripts/device_session10g.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 100 python3 scripts/step_breakdown.py 2>&1 | cut -c1-200
echo "== breakdown $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot > /tmp/tccg-bf16.txt 2>&1
echo "== TCCG-24 bf16 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-bf16.txt)"
grep -E "ccsd |ao2mo|x  " /tmp/tccg-bf16.txt | cut -c1-120 | head -30
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo" /tmp/tccg-fp32.txt | cut -c1-120 | head -30
timeout 120 python3 -m einc bench --backend cuda > /tmp/bench.txt 2>&1
echo "== bench rc=$? ($((SECONDS-T0))s)"; grep -iE "gemm|cublas|int8|tf32|dot|copy" /tmp/bench.txt | cut -c1-150 | head -20
source scripts/device_gpu_tests.sh
echo "done $((SECONDS-T0))s"
