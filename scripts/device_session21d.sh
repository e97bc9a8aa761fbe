#!/usr/bin/env bash
# Session 21, call d: SASS of the DM main loop (opcode counts); 64x128x32d (half the
# barriers) against 64x128x16d and the 32x32-piece tiles.  (bash scripts/device_session21d.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
EINC_GETT_BIG_TILE=64x128x16d python3 scripts/sass_dm.py 'ij,jk->ik' 4096
echo "== tiles ($((SECONDS-T0))s)"
BIG_TILES_CASES="ij,jk->ik;ki,jk->ji;lki,jl->kji;njmi,kmln->lkji;lnim,kmjn->lkji" \
  timeout 300 python3 scripts/big_tiles.py 64x128x16d 64x128x32d 128x128x16ds 64x128x16ds
echo "done $((SECONDS-T0))s"
