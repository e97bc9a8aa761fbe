#!/usr/bin/env bash
# Session 21, call g: the suites with the DM default -- TCCG-24 fp32 (JSON, table, roofline
# PNG) and `einc bench --backend cuda` (GEMMs against cuBLAS, bandwidth kernels).
#   (bash scripts/device_session21g.sh; results under $OUT/results)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 280 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -34
echo "== core ($((SECONDS-T0))s)"
timeout 250 python3 -m einc bench --backend cuda 2>&1 | tail -40
echo "done $((SECONDS-T0))s"
