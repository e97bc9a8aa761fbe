#!/usr/bin/env bash
# Session 22, call h: the TMA producer asking L2 for the block's next tile (wgmma.cuh TMA_OPT
# bit 2, EINC_WGMMA_TMA_OPT=4) -- ws tests with it, ncu and case_bench against it off.
set -u
source scripts/device_env.sh
T0=$SECONDS
EINC_WGMMA_TMA_OPT=4 timeout 120 python3 -m pytest -q -m gpu tests/test_mma.py -k "ws_against_numpy and (ws1p or wsp) and True-False" 2>&1 | grep -E "FAILED|passed|failed" | head -5
echo "--- ncu $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for c in 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' 'lki,jl->kji:i=384,j=376,k=376,l=384'; do
  for o in 4 0; do
    echo "== $c opt=$o"
    EINC_WGMMA_TMA_OPT=$o timeout 40 ncu --clock-control none -k regex:einc_wgmma --launch-skip 2 --launch-count 1 --metrics $M python3 scripts/one_einsum.py "$c" bfloat16 2>&1 | grep -E "duration|pct" | sed 's/  */ /g'
  done
done
echo "--- bench $((SECONDS-T0))s"
for o in 4 0 4 0; do echo "opt=$o"; EINC_WGMMA_TMA_OPT=$o timeout 60 python3 scripts/case_bench.py bfloat16 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' 'lki,jl->kji:i=384,j=376,k=376,l=384' 2>&1 | tail -2; done
echo "done $((SECONDS-T0))s"
