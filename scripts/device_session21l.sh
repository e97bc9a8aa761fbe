#!/usr/bin/env bash
# Session 21, call l: the DM loaders' whole-slice path for tabled K (split-K steps, ccsd
# kmli,ljm): DM GPU tests, memcheck on a tabled K, SIMT (EINC_GETT_DM=0) against the DM tiles.
#   (bash scripts/device_session21l.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 100 python3 -m pytest -q -x -m gpu tests/test_gett_dm.py 2>&1 | tail -2
EINC_GETT_BIG_TILE=64x128x16d timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py 'lik,jlk->ji:l=37,i=130,k=45,j=150' 2>&1 | grep -E "ERROR SUMMARY" | head -2
BIG_TILES_CASES="lki,kjl->ji;lik,jkl->ji;kmli,ljm->kji;njmi,mknl->lkji" \
  timeout 200 python3 scripts/big_tiles.py simt 64x128x16d 128x64x16d
echo "done $((SECONDS-T0))s"
