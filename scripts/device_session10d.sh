#!/usr/bin/env bash
# Session 10, fourth call: plan.table_copies (heavy tensor-core GEMMs with tabled operands
# copied into GEMM order) and TMA over groups strided in the operand (C may stay tabled).
# Every GPU test, the three-way comparison (scripts/table_copy_compare.py), TCCG-24 bf16 with
# its plot. (bash scripts/device_session10d.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 120 python3 scripts/table_copy_compare.py bfloat16 2>&1 | cut -c1-250
echo "== compare $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot > /tmp/tccg-bf16.txt 2>&1
echo "== TCCG-24 bf16 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-bf16.txt)"
grep -E "ccsd" /tmp/tccg-bf16.txt | cut -c1-120
source scripts/device_gpu_tests.sh
echo "done $((SECONDS-T0))s"
