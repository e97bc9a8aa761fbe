#!/usr/bin/env bash
# Session 6, check of the ws tile rule (tabled M or K < 256 keep the all-loader wgmma tiles):
# the TCCG bf16 cases it moves, beside torch.einsum. (bash scripts/device_session6e.sh)
set -u
source scripts/device_env.sh
timeout 100 python3 scripts/case_bench.py bfloat16 "njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96" \
  "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96" "njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84" \
  "lki,jl->kji:i=384,j=376,k=376,l=384" "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" \
  "amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" "ki,jk->ji:i=7248,j=7240,k=7248" 2>&1 | cut -c1-140
