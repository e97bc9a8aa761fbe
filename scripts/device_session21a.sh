#!/usr/bin/env bash
# Session 21, call a: the rewritten DM tiles (gett_dm.cuh: operands staged along their unit
# stride, every copy cp.async, fragments read across the slice barrier) -- GPU tests, then
# A/B against the SIMT default and torch.einsum.  (bash scripts/device_session21a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 200 python3 -m pytest -q -x -m gpu tests/test_gett_dm.py 2>&1 | tail -5
echo "== tiles ($((SECONDS-T0))s)"
timeout 330 python3 scripts/big_tiles.py auto 128x128x16d 128x128x32d 64x128x16d 128x64x16d
echo "done $((SECONDS-T0))s"
