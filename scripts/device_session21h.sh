#!/usr/bin/env bash
# Session 21, call h: which DM tile where, after the loaders' fast path (ccsd GEMM-likes),
# and `einc tune` on lki,jl->kji, the fp32 TCCG case still below 1x.  (bash scripts/device_session21h.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
BIG_TILES_CASES="ki,jk->ji;lki,jl->kji;kli,lj->kji;lki,kjl->ji;lik,jkl->ji;kmli,ljm->kji;njmi,mknl->lkji" \
  timeout 250 python3 scripts/big_tiles.py 64x128x16d 128x64x16d 128x128x16d
echo "== tune ($((SECONDS-T0))s)"
timeout 150 python3 -m einc tune "lki,jl->kji" --shapes 384x376x384,376x384 --dtype float32 2>&1 | tail -14
echo "done $((SECONDS-T0))s"
