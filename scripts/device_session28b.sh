#!/usr/bin/env bash
# Session 28, call b: 192x192wsp in clusters of two -- "b" (vertical pairs, B multicast) and
# "a" (horizontal pairs, A multicast): GPU tests, sanitizers, then case_bench and ncu against
# the plain tile (EINC_WGMMA_CLUSTER=0), alternated.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m pytest -q -m gpu tests/test_mma.py -k "cluster" -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -20
echo "--- sanitize $((SECONDS-T0))s"
for m in a b; do for tool in memcheck racecheck synccheck; do
  echo -n "$m $tool: "; EINC_WGMMA_CLUSTER=$m timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_ncu_case.py 'ki,jk->ji:i=2112,j=2104,k=1152' bfloat16 2>&1 | tail -1
done; done
echo "--- bench $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
NJM='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84'
LN='lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96'
for r in 1 2; do
  for v in 0 b a; do
    echo "cluster=$v"
    EINC_WGMMA_CLUSTER=$v timeout 60 python3 scripts/case_bench.py bfloat16 $KI $NJK $NJM $LN 2>&1 | grep -v Warn | tail -4 | cut -c1-110
    EINC_WGMMA_CLUSTER=$v timeout 60 python3 scripts/case_bench.py float16 $KI 2>&1 | grep -v Warn | tail -1 | cut -c1-110
  done
done
echo "--- ncu $((SECONDS-T0))s"
for v in 0 b a 0; do
  EINC_WGMMA_CLUSTER=$v timeout 60 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum python3 scripts/sk_ncu_case.py $KI bfloat16 2>&1 | grep -E "^\s+(gpu__|sm__|lts__)" | awk -v v="$v" '{print "cluster=" v, $1, $(NF-1), $NF}'
done
echo "done $((SECONDS-T0))s"
