#!/usr/bin/env bash
# Session 26, call c (what the remaining device time fits): the 192x192 tile's SASS, TCCG-24
# bf16 with it on by default, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
python3 scripts/sass_192.py /tmp/k192.cubin && cuobjdump --dump-sass /tmp/k192.cubin | grep -o "HGMMA\.[0-9x]*[^ ]*" | sort | uniq -c | head -4
echo "--- suite bf16 $((SECONDS-T0))s"
timeout 160 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | tail -27
echo "--- main bench $((SECONDS-T0))s"
timeout 120 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | tail -14
echo "done $((SECONDS-T0))s"
