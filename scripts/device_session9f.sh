#!/usr/bin/env bash
# Session 9: the 96-wide SIMT gett tiles (12x8 on 96 threads, 12x4 on 192) against the plan's
# tile on TCCG's cases with a group of 84-96 and on a square GEMM, beside torch.einsum; the
# gett GPU tests. (bash scripts/device_session9f.sh; 96x96x8b was removed after this run, so
# on a later tree tile_sweep times that row with the plan's own tile)
set -u
source scripts/device_env.sh
T0=$SECONDS
for c in "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" "bq,srqa->srba:a=96,b=84,q=96,r=84,s=84" \
         "cr,srba->scba:a=96,b=84,c=84,r=96,s=84" "kmli,ljm->kji:i=96,j=84,k=84,l=84,m=96" \
         "ij,jk->ik:i=4096,j=4096,k=4096" "ij,jk->ik:i=96,j=4096,k=65536"; do
  timeout 90 python3 scripts/tile_sweep.py float32 "$c" default 128x128x8 96x96x8 96x96x8b 2>&1 | cut -c1-110
done
echo "== gett GPU tests ($((SECONDS-T0))s)"
timeout 150 python3 -m pytest -q -x -m gpu -n 8 -p no:cacheprovider tests/test_gett_kernel.py tests/test_cuda_backend.py 2>&1 | tail -2
echo "done $((SECONDS-T0))s"
