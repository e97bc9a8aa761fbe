#!/usr/bin/env bash
# Session 14, call c: wgmma128x128ws1p (ws1, persistent, C staged as its 16-bit type apart from a
# two-stage ring so the producer fills the next tile during the epilogue) against ws1 / the
# default on short-K bf16 steps; the GPU tests of both new tiles.
#   (bash scripts/device_session14c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
echo "== ws1/ws1p tests"
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py -k "ws1" 2>&1 | tail -3
for c in "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" "bq,srqa->srba:a=96,b=84,q=96,r=84,s=84" "cr,srba->scba:a=96,b=84,c=84,r=96,s=84" \
         "lki,jl->kji:i=384,j=376,k=376,l=384" "ij,jk->ik:i=16384,j=4096,k=256" "ij,jk->ik:i=16384,j=4096,k=128" "ij,jk->ik:i=2048,j=2048,k=512"; do
  echo "== $c ($((SECONDS-T0))s)"
  timeout 90 python3 scripts/tile_sweep.py bfloat16 "$c" default wgmma128x128ws1p wgmma128x128ws1 wgmma128x128ws1p default 2>&1 | tail -n 6
done
echo "done $((SECONDS-T0))s"
