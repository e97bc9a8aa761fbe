#!/usr/bin/env bash
# Session 9: narrow_copy on ao2mo ap,srqp (the small operand transposed so the 96-wide tile
# applies): plan, gett and graph GPU tests, ap,srqp through tile_sweep (the plan's tiles, and
# the 128 tile after the copy), TCCG-24 fp32 with its plot. (bash scripts/device_session9h.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 150 python3 -m pytest -q -x -m gpu -n 8 -p no:cacheprovider tests/test_cuda_backend.py tests/test_gpu_plan_rewrites.py \
  tests/test_cost_tune.py tests/test_cuda_graphs.py 2>&1 | tail -2
timeout 60 python3 scripts/tile_sweep.py float32 "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" default 128x128x8 2>&1 | cut -c1-110
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ao2mo" /tmp/tccg-fp32.txt | cut -c1-120
echo "done $((SECONDS-T0))s"
