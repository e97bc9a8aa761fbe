#!/usr/bin/env bash
# Session 5: each einc kernel's GPU time in the Sycamore steps that dominate slice 0.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
timeout 200 python3 scripts/syc_kernels.py ${TOP:-16} "$OUT/kernels.json" > "$OUT/kernels.txt" 2>&1
echo "rc=$?"; grep -E "^step|wall|Error" "$OUT/kernels.txt" | cut -c1-200 | head -30
