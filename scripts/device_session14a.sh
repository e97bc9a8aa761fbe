#!/usr/bin/env bash
# Session 14, call a: the warp-specialised wgmma tile with the direct epilogue (C stored from
# the accumulators, persistent blocks, the producer running on into the next tile;
# EINC_WGMMA_EPI=direct) against the staged one on short-K TCCG bf16 steps and the big GEMMs;
# its GPU tests; the L2 hint now default on the tensor-core families (0 against default).
#   (bash scripts/device_session14a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
echo "== ws tests"
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py -k "wgmma_ws" 2>&1 | tail -3
B="lki,jl->kji:i=384,j=376,k=376,l=384 lik,jkl->ji:i=384,j=376,k=384,l=384 njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84 njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96 lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96 ki,jk->ji:i=7248,j=7240,k=7248 ij,jk->ik:i=8192,j=8192,k=8192 ij,jk->ik:i=2048,j=2048,k=512 ij,jk->ik:i=16384,j=4096,k=256"
v() { echo "== $1 $2 ($((SECONDS-T0))s)"; env EINC_WGMMA_EPI=$2 timeout 120 python3 scripts/case_bench.py $1 $B 2>&1 | tail -n +2 | cut -c1-130; }
v bfloat16 staged; v bfloat16 direct; v bfloat16 staged; v bfloat16 direct
C="lki,jl->kji:i=384,j=376,k=376,l=384 ij,jk->ik:i=8192,j=8192,k=8192 ik,jk->ij:i=8192,j=8192,k=8192"
w() { echo "== $1 $2 ($((SECONDS-T0))s)"; env EINC_WGMMA_EPI=$2 timeout 120 python3 scripts/case_bench.py $1 $C 2>&1 | tail -n +2 | cut -c1-130; }
w float16 staged; w float16 direct
echo "== sweep direct ($((SECONDS-T0))s)"
EINC_WGMMA_EPI=direct timeout 90 python3 scripts/tile_sweep.py bfloat16 "lki,jl->kji:i=384,j=376,k=376,l=384" wgmma128x256ws wgmma256x128ws wgmma128x128s3 wgmma128x128
L="abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 bq,srqa->srba:a=96,b=84,q=96,r=84,s=84 amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
u() { echo "== L2 $1 ($((SECONDS-T0))s)"; env EINC_L2_PREFETCH=$1 timeout 90 python3 scripts/case_bench.py bfloat16 $L 2>&1 | tail -n +2 | cut -c1-130; }
u 0; u 128
echo "done $((SECONDS-T0))s"
