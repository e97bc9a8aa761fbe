#!/usr/bin/env bash
# Session 27, call d: 192x192wsp (persistent, C staged apart, three stages) -- its GPU tests,
# then against 192x192ws (EINC_WGMMA_192P=0) alternated twice, and ncu time of both; ap,srqp's
# suite dip (0.73 in 27c) looked at with case_bench and wall_inner.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 -m pytest -q -x -m gpu tests/test_mma.py -k "192x192wsp" -p no:cacheprovider 2>&1 | tail -3
echo "--- bench $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
SQ='ij,jk->ik:i=8192,j=8192,k=8192'
for r in 1 2; do
  for v in 1 0; do
    echo "192P=$v"
    EINC_WGMMA_192P=$v timeout 100 python3 scripts/case_bench.py bfloat16 $KI $SQ 2>&1 | grep -v Warn | tail -2
    EINC_WGMMA_192P=$v timeout 100 python3 scripts/case_bench.py float16 $KI 2>&1 | grep -v Warn | tail -1
  done
done
echo "--- ncu $((SECONDS-T0))s"
for v in 1 0; do
  EINC_WGMMA_192P=$v timeout 90 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread python3 scripts/sk_ncu_case.py $KI bfloat16 2>&1 | grep -E "^\s+(gpu__|sm__|launch__)" | awk -v v=$v '{print "192P=" v, $1, $NF}'
done
echo "--- aqrs $((SECONDS-T0))s"
AQ='ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'
timeout 60 python3 scripts/case_bench.py bfloat16 $AQ 2>&1 | grep -v Warn | tail -1
timeout 60 python3 scripts/wall_inner.py bfloat16 $AQ 2>&1 | grep -v Warn
echo "done $((SECONDS-T0))s"
