#!/usr/bin/env bash
# Session 20, call c: the fp64-tensor-core gett tiles (DM: 128x128x8d, 128x128x16d) against
# the SIMT default on fp32 GEMM-like einsums, twice.  (bash scripts/device_session20c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 250 python3 scripts/big_tiles.py
echo "== run 2 ($((SECONDS-T0))s)"
timeout 250 python3 scripts/big_tiles.py 128x128x16d auto 128x128x8d
echo "done $((SECONDS-T0))s"
