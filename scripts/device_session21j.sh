#!/usr/bin/env bash
# Session 21, call j: TCCG-24 bf16 in this session (no bf16 kernel changed: the suite's
# same-day figures for the closing table).  (bash scripts/device_session21j.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 250 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | tail -30
echo "done $((SECONDS-T0))s"
