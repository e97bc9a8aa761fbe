#!/usr/bin/env bash
# Session 24, call a: the TMA rows copy (GPU tests, copy timings beside the SIMT kernels and
# torch), the GEMM-order copies as rows copies (njmi,kmln and neighbours, old plan beside new),
# host time against kernel time for the cases below 1x.
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 240 python3 -m pytest -q -x -m gpu tests/test_copy_tma.py -p no:cacheprovider 2>&1 | tail -4
echo "--- copies $((SECONDS-T0))s"
timeout 120 python3 scripts/copy_bench.py bfloat16 'njmi->mnji:96x84x84x96' 'kmln->lkmn:84x84x84x96' 'lnim->linm:84x96x96x96' 'njmi->jinm:96x84x84x96' 'kmln->lknm:84x84x84x96' 2>&1 | grep -v Warn
timeout 60 python3 scripts/copy_bench.py float32 'abc->bac:64x2048x256' 'njmi->mnji:96x84x84x96' 2>&1 | grep -v Warn
echo "--- plans: rows copies / the old transposes $((SECONDS-T0))s"
NJ='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
OTHERS='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84 lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96'
for r in 1 2; do
timeout 100 python3 scripts/case_bench.py bfloat16 $NJ $OTHERS 2>&1 | tail -3
EINC_TC_COPY_ROWS=0 EINC_COPY_TMA=0 timeout 100 python3 scripts/case_bench.py bfloat16 $NJ $OTHERS 2>&1 | tail -3
done
timeout 100 python3 scripts/timeline.py bfloat16 $NJ 2>&1 | grep -v Warning
echo "--- host $((SECONDS-T0))s"
AQ='ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'
timeout 100 python3 scripts/wall_inner.py bfloat16 $AQ 'bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' 2>&1 | grep -v Warn
timeout 60 python3 scripts/host_overhead.py bfloat16 $AQ 2>&1 | grep -v Warn | head -30
echo "done $((SECONDS-T0))s"
