#!/usr/bin/env bash
# Session 5: the whole Sycamore amplitude on one H200 -- all 512 slices of the 34.36 GB tree,
# einc (one Dask worker) and cotengra+CuPy on the same sliced tree in the same run -- then 8
# slices of the 256-slice tree (64 GiB bound) for comparison.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
timeout 420 python3 scripts/sycamore_bench.py --devices 0 --anchor cupy --json "$OUT/syc-full.json" > "$OUT/syc-full.txt" 2>&1
echo "full rc=$?"; grep -E "einc|cotengra|slices|peak|Error|error" "$OUT/syc-full.txt" | cut -c1-200 | tail -6
python3 -c "import json; d=json.load(open('$OUT/syc-full.json')); print('einc', d.get('einc_1dev', {}).get('value'), 'cotengra', d.get('cotengra_cupy', {}).get('value'))"
timeout 100 python3 scripts/sycamore_bench.py --devices 0 --slices 8 --memory-limit 64GiB --anchor cupy \
  --json "$OUT/syc-256.json" > "$OUT/syc-256.txt" 2>&1
echo "256 rc=$?"; grep -E "einc|cotengra|slices|peak|Error|error" "$OUT/syc-256.txt" | cut -c1-200 | tail -5
