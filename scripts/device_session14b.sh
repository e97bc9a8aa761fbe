#!/usr/bin/env bash
# Session 14, call b: wgmma128x128ws1 (one consumer warpgroup of two 64-row strips beside the
# producer, two blocks per SM) against the chosen tiles on short-K bf16 steps; its GPU tests.
#   (bash scripts/device_session14b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
echo "== ws1 tests"
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py -k "wgmma_ws and 128x128ws1" 2>&1 | tail -3
for c in "lki,jl->kji:i=384,j=376,k=376,l=384" "ij,jk->ik:i=16384,j=4096,k=256" "ij,jk->ik:i=2048,j=2048,k=512" \
         "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" "bq,srqa->srba:a=96,b=84,q=96,r=84,s=84" \
         "amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" "ij,jk->ik:i=8192,j=8192,k=8192" "ki,jk->ji:i=7248,j=7240,k=7248"; do
  echo "== $c ($((SECONDS-T0))s)"
  timeout 90 python3 scripts/tile_sweep.py bfloat16 "$c" default wgmma128x128ws1 wgmma128x256ws wgmma128x128s3 wgmma128x128ws1 default 2>&1 | tail -n 7
done
echo "done $((SECONDS-T0))s"
