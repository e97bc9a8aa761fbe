#!/usr/bin/env bash
# Session 13, call a: where the host time goes (8x8 and 72^5), how much of it the 5-call samples
# expose; the L2 hint on the tensor-core families (bf16, EINC_L2_PREFETCH=128 against the default);
# the stream_mma kernel past K = 64 on ao2mo ap,srqp (EINC_STREAM=1 EINC_STREAM_MMA_KMAX=128).
#   (bash scripts/device_session13a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
X5="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
echo "== host"; timeout 60 python3 scripts/host_overhead.py "ij,jk->ik:i=8,j=8,k=8" "$X5" 2>&1 | grep -v "^$" | cut -c1-150 | head -60
echo "== inner ($((SECONDS-T0))s)"; timeout 60 python3 scripts/inner_calls.py "$X5"
B="ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 bq,srqa->srba:a=96,b=84,q=96,r=84,s=84 amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 lki,jl->kji:i=384,j=376,k=376,l=384 akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96"
v() { echo "== $* ($((SECONDS-T0))s)"; env "$@" timeout 90 python3 scripts/case_bench.py bfloat16 $B 2>&1 | tail -n +2 | cut -c1-130; }
v EINC_X=0; v EINC_L2_PREFETCH=128; v EINC_X=0; v EINC_L2_PREFETCH=128
S="ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84"
w() { echo "== $* ($((SECONDS-T0))s)"; env "$@" timeout 60 python3 scripts/case_bench.py bfloat16 $S 2>&1 | tail -n +2 | cut -c1-130; }
w EINC_X=0; w EINC_STREAM=1 EINC_STREAM_MMA_KMAX=128; w EINC_STREAM=1 EINC_STREAM_MMA_KMAX=128 EINC_L2_PREFETCH=128
echo "== stream tests ($((SECONDS-T0))s)"
timeout 90 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_stream.py 2>&1 | tail -2
echo "done $((SECONDS-T0))s"
