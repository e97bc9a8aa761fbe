#!/usr/bin/env bash
# Session 5, second device call: the GPU tests after the permute kernel (mode-set tiles),
# aligned sums and outermost-first split cuts; then Sycamore slices with the CuPy anchor and
# slice 0 step by step. Long output -> $OUT; a short summary printed.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
source scripts/device_gpu_tests.sh  # (the shared list; this run had a subset of it)
timeout ${SYC_S:-240} python3 scripts/sycamore_bench.py --devices 0 --slices ${SLICES:-4} --anchor cupy --profile --top 40 \
  --json "$OUT/syc.json" > "$OUT/syc.txt" 2>&1
echo "syc rc=$?"; grep -vE "^  step" "$OUT/syc.txt" | grep -E "einc|cotengra|slices|peak|Error|error" | cut -c1-200 | tail -8
grep -E "^  step" "$OUT/syc.txt" | head -14 | cut -c1-160
