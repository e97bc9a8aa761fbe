#!/usr/bin/env bash
# Session 10, second call: the TMA producer's GPU tests (test_mma, the graph tests), then TMA
# against cp.async on the GEMMs (scripts/tma_compare.py). (bash scripts/device_session10b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py tests/test_cuda_graphs.py > $OUT/mma-tests.txt 2>&1
echo "== mma/graph tests rc=$? $((SECONDS-T0))s: $(tail -1 $OUT/mma-tests.txt)"; grep -E "^FAILED" $OUT/mma-tests.txt | cut -c1-200 | head
timeout 200 python3 scripts/tma_compare.py 2>&1 | cut -c1-230
echo "done $((SECONDS-T0))s"
