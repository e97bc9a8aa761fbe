#!/usr/bin/env bash
# Session 21, call i: persistent DM blocks (one cp.async ring across a block's tiles) -- DM
# GPU tests, racecheck / memcheck, the tiles A/B, TCCG-24 fp32.  (bash scripts/device_session21i.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -x -m gpu tests/test_gett_dm.py 2>&1 | tail -2
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py 'ij,jk->ik:i=1700,j=300,k=1500' 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | head -2
done
echo "== tiles ($((SECONDS-T0))s)"
BIG_TILES_CASES="ij,jk->ik;ki,jk->ji;lki,jl->kji;kli,lj->kji;njmi,kmln->lkji" \
  timeout 200 python3 scripts/big_tiles.py 64x128x16d 128x64x16d
echo "== tccg24 ($((SECONDS-T0))s)"
timeout 200 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -30
echo "done $((SECONDS-T0))s"
