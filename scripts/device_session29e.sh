#!/usr/bin/env bash
# Session 29, call e (not run: written for the next session's first call): wgmma192x192wsp4
# (four stages, C staged a warpgroup at a time; EINC_WGMMA_192P4=1 each warpgroup's leader stores
# its rows, 2 a producer-warpgroup thread does) -- its GPU tests, racecheck / synccheck, ncu
# beside wsp and cuBLAS at K 7248 and 14496, wall-clock A/B.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python3 -m pytest -q -m gpu tests/test_mma.py -k "wsp4 or cluster_grid" -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -12
S='ki,jk->ji:i=2112,j=2104,k=1152'
for v in 1 2; do for tool in racecheck synccheck; do
  echo -n "wsp4 mode $v $tool: "; EINC_WGMMA_192P4=$v timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_ncu_case.py $S bfloat16 2>&1 | tail -1
done; done
echo "--- ncu $((SECONDS-T0))s"
for k in 7248 14496; do
  C="ki,jk->ji:i=7248,j=7240,k=$k"
  for v in 0 1 2; do
    EINC_WGMMA_192P4=$v timeout 50 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum python3 scripts/sk_ncu_case.py $C bfloat16 2>&1 | grep -E "^\s+gpu__" | awk -v v="wsp4=$v k=$k" '{print v, $(NF-1), $NF}'
  done
  timeout 50 ncu -k regex:nvjet --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum python3 scripts/sk_ncu_case.py $C bfloat16 torch 2>&1 | grep -E "^\s+gpu__" | awk -v v="cublas k=$k" '{print v, $(NF-1), $NF}'
done
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=4 timeout 90 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.WIDE_FOUR 0,1,2 bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248' 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 2>&1 | grep -v Warn
echo "done $((SECONDS-T0))s"
