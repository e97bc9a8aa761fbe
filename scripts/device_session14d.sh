#!/usr/bin/env bash
# Session 14, call d: C staged apart from the ring on deeper rings at one block per SM
# (wgmma128x128ws1p4: four stages; wgmma128x256wsp: 128x256ws with three) against the chosen
# tiles; their GPU tests.   (bash scripts/device_session14d.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
echo "== tests"
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py -k "wgmma_ws and (ws1p4 or 256wsp)" 2>&1 | tail -3
for c in "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" "bq,srqa->srba:a=96,b=84,q=96,r=84,s=84" \
         "lki,jl->kji:i=384,j=376,k=376,l=384" "ij,jk->ik:i=16384,j=4096,k=256" "ij,jk->ik:i=16384,j=4096,k=128" "ij,jk->ik:i=8192,j=8192,k=8192" "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96"; do
  echo "== $c ($((SECONDS-T0))s)"
  timeout 120 python3 scripts/tile_sweep.py bfloat16 "$c" default wgmma128x128ws1p4 wgmma128x256wsp wgmma128x256ws wgmma128x128ws1p4 wgmma128x256wsp default 2>&1 | tail -n 7
done
echo "done $((SECONDS-T0))s"
