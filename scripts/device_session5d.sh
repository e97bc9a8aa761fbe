#!/usr/bin/env bash
# Session 5: GPU tests after the pool threshold, skinny's N-fast staging and the grown permute
# tiles; per-kernel times of slice 0's big steps; Sycamore slices against cotengra+CuPy.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
source scripts/device_gpu_tests.sh  # (the shared list; this run had a subset of it)
timeout 150 python3 scripts/syc_kernels.py ${TOP:-12} "$OUT/kernels.json" > "$OUT/kernels.txt" 2>&1
echo "kernels rc=$?"; grep -E "^step|wall|Error" "$OUT/kernels.txt" | cut -c1-200 | head -14
timeout ${SYC_S:-200} python3 scripts/sycamore_bench.py --devices 0 --slices ${SLICES:-8} --anchor cupy \
  --json "$OUT/syc.json" > "$OUT/syc.txt" 2>&1
echo "syc rc=$?"; grep -E "einc|cotengra|slices|peak|Error|error" "$OUT/syc.txt" | cut -c1-200 | tail -6
