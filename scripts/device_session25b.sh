#!/usr/bin/env bash
# Session 25, call b (closing): the 192x192 tile's SASS, TCCG-24 bf16 and fp32, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
python3 scripts/sass_192.py /tmp/k192.cubin && cuobjdump --dump-sass /tmp/k192.cubin | grep -o "HGMMA\.[0-9x]*[^ ]*" | sort | uniq -c | head -4
echo "--- suites $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | tail -28
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -28
echo "--- main bench $((SECONDS-T0))s"
timeout 140 python3 -m einc bench --backend cuda 2>&1 | tail -16
echo "done $((SECONDS-T0))s"
