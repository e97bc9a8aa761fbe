#!/usr/bin/env bash
# Session 23, call a: the wgmma stream-K tail -- its GPU tests, sanitizers, and A/B timings
# (EINC_WGMMA_STREAMK=1 / 0 alternated twice, torch.einsum in the same process).
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 240 python3 -m pytest -q -x -m gpu tests/test_wgmma_streamk.py 2>&1 | tail -4
echo "--- mma/wgmma tests $((SECONDS-T0))s"
timeout 150 python3 -m pytest -q -m gpu tests/test_mma.py -k "wgmma or tma" 2>&1 | tail -3
echo "--- sanitizers $((SECONDS-T0))s"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_sanitize_case.py 2>&1 | tail -3
done
echo "--- A/B $((SECONDS-T0))s"
for rep in 1 2; do
  for sk in 1 0; do
    echo "EINC_WGMMA_STREAMK=$sk"
    EINC_WGMMA_STREAMK=$sk timeout 100 python3 scripts/case_bench.py bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248' \
      'ij,jk->ik:i=8192,j=8192,k=8192' 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 'lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96' 'njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84' 2>&1 | tail -5
    EINC_WGMMA_STREAMK=$sk timeout 60 python3 scripts/case_bench.py float16 'ij,jk->ik:i=8192,j=8192,k=8192' 2>&1 | tail -1
  done
done
echo "done $((SECONDS-T0))s"
