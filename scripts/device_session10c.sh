#!/usr/bin/env bash
# Session 10, third call: the rank-3 (batch) maps fixed -- the TMA tests again -- then the
# TMA producer's switches on a few GEMMs (scripts/tma_variants.py). (bash scripts/device_session10c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py tests/test_cuda_graphs.py -k "ws or tma or graph" > $OUT/mma-tests.txt 2>&1
echo "== ws/tma/graph tests rc=$? $((SECONDS-T0))s: $(tail -1 $OUT/mma-tests.txt)"; grep -E "^FAILED" $OUT/mma-tests.txt | cut -c1-200 | head
timeout 300 python3 scripts/tma_variants.py 2>&1 | cut -c1-230
echo "done $((SECONDS-T0))s"
