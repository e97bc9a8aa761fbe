#!/usr/bin/env bash
# Session 23, call f: the stream-K tail with the whole waves' tiles taken from a counter and the
# slice loop counted from 0 (call b's kernels had wgmma serialised by ptxas, C7515): tests,
# sanitizers, ncu SK / plain on both tiles (EINC_WGMMA_SK_TILES puts 128x256ws on it).
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -x -m gpu tests/test_wgmma_streamk.py 2>&1 | tail -3
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_sanitize_case.py 2>&1 | tail -1
done
echo "--- ncu $((SECONDS-T0))s"
for rep in 1 2; do
for case in 'ki,jk->ji:i=7248,j=7240,k=7248 bfloat16' 'ij,jk->ik:i=8192,j=8192,k=8192 float16' \
            'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96 bfloat16'; do
  for sk in 1 0; do
    set -- $case
    r=$(EINC_WGMMA_SK_TILES=wgmma128x256ws,wgmma256x128ws EINC_WGMMA_STREAMK=$sk timeout 60 ncu -k regex:einc_wgmma \
        --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum python3 scripts/sk_ncu_case.py $1 $2 2>&1 \
        | grep -E "gpu__time_duration" | awk '{print $NF, $(NF-1)}' | tr '\n' ' ')
    echo "$1 $2 SK=$sk: $r"
  done
done
done
echo "done $((SECONDS-T0))s"
