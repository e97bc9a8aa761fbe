#!/usr/bin/env bash
# Session 7, call 6: every wgmma tile on the bf16 TCCG cases still below torch.einsum, and
# the reworked tensor-core GPU test (cases forced onto the kernels they name).
set -u
source scripts/device_env.sh
W="default wgmma128x128 wgmma128x256 wgmma256x128 wgmma128x256ws wgmma256x128ws wgmma128x128s3"
for c in 'lki,jl->kji:i=384,j=376,k=376,l=384' 'njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84' \
         'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 'lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96' \
         'ki,jk->ji:i=7248,j=7240,k=7248' 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'; do
  python3 scripts/tile_sweep.py bfloat16 "$c" $W
done
python3 -m pytest -q -m gpu tests/test_mma.py 2>&1 | tail -2
