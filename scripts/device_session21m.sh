#!/usr/bin/env bash
# Session 21, call m: the closing suite -- DM tests, TCCG-24 fp32 with tabled-K steps on
# 128x64x16d.  (bash scripts/device_session21m.sh; results under $OUT/results)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 100 python3 -m pytest -q -x -m gpu tests/test_gett_dm.py tests/test_cost_tune.py 2>&1 | tail -2
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -30
echo "done $((SECONDS-T0))s"
