#!/usr/bin/env bash
# Session 23, call b: stream-K tests after the 256x128ws setmaxnreg fix; ncu kernel times with
# EINC_WGMMA_STREAMK=1 / 0 (the wall-clock A/B of call a could not separate them from noise).
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 200 python3 -m pytest -q -x -m gpu tests/test_wgmma_streamk.py 2>&1 | tail -25
echo "--- ncu $((SECONDS-T0))s"
for rep in 1 2; do
for case in 'ki,jk->ji:i=7248,j=7240,k=7248 bfloat16' 'ij,jk->ik:i=8192,j=8192,k=8192 float16' \
            'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96 bfloat16'; do
  for sk in 1 0; do
    set -- $case
    r=$(EINC_WGMMA_STREAMK=$sk timeout 60 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 \
        --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second python3 scripts/sk_ncu_case.py $1 $2 2>&1 \
        | grep -E "gpu__time_duration|per_second" | awk '{print $NF, $(NF-1)}' | tr '\n' ' ')
    echo "$1 $2 SK=$sk: $r"
  done
done
done
echo "done $((SECONDS-T0))s"
