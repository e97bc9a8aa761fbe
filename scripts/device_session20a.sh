#!/usr/bin/env bash
# Session 20, call a (run with the thick tiles 128x128x8t / 256x128x8t, 16x8 per thread, since removed: see
# NOTES) against the default big tile on
# fp32 GEMM-like einsums, twice; SASS instruction counts of the 4096^3 GEMM's kernels.
#   (bash scripts/device_session20a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
timeout 250 python3 scripts/big_tiles.py
echo "== run 2 ($((SECONDS-T0))s)"
timeout 200 python3 scripts/big_tiles.py auto 128x128x8t 256x128x8t auto
echo "done $((SECONDS-T0))s"
