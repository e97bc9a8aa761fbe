#!/usr/bin/env bash
# Session 10, fifth call: test_mma's forced-tile fix, then the GEMM tile and tile-order
# variants beside the table copies (scripts/table_copy_compare.py). (bash scripts/device_session10e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py > $OUT/mma-tests.txt 2>&1
echo "== mma tests rc=$? $((SECONDS-T0))s: $(tail -1 $OUT/mma-tests.txt)"; grep -E "^FAILED" $OUT/mma-tests.txt | cut -c1-200 | head
timeout 300 python3 scripts/table_copy_compare.py bfloat16 2>&1 | cut -c1-250
echo "done $((SECONDS-T0))s"
