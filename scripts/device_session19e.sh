#!/usr/bin/env bash
# Session 19, call e: TCCG-24 bf16 and fp32 (results committed) and the main bench on the
# tree with the fitted copies, the rows copy and lki,jl's split TMA store.
#   (bash scripts/device_session19e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
export EINC_RESULTS_DIR=$OUT
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot > /tmp/tccg-bf16.txt 2>&1
echo "== TCCG-24 bf16 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-bf16.txt)"
grep -E "^\| [0-9]" /tmp/tccg-bf16.txt | cut -c1-140
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "^\| [0-9]" /tmp/tccg-fp32.txt | cut -c1-140
timeout 200 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$? ($((SECONDS-T0))s)"; tail -24 /tmp/main.txt | cut -c1-140
echo "done $((SECONDS-T0))s"
