#!/usr/bin/env bash
# Session 26, call b (closing): the 192x192 tile's SASS, TCCG-24 bf16 and fp32 (192 on by
# default now), the main bench, memcheck on copy_tma.
set -u
source scripts/device_env.sh
T0=$SECONDS
python3 scripts/sass_192.py /tmp/k192.cubin && cuobjdump --dump-sass /tmp/k192.cubin | grep -o "HGMMA\.[0-9x]*[^ ]*" | sort | uniq -c | head -4
echo "--- suites $((SECONDS-T0))s"
timeout 160 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | tail -27
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | tail -27
echo "--- main bench $((SECONDS-T0))s"
timeout 140 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | tail -14
echo "--- memcheck $((SECONDS-T0))s"
timeout 50 compute-sanitizer --tool memcheck python3 scripts/copy_tma_sanitize_case.py 2>&1 | grep -v Warn | tail -4
echo "done $((SECONDS-T0))s"
