#!/usr/bin/env bash
# Session 19, call d: lki,jl->kji's C stored by a split TMA map (kernel N = k i) against the
# threads' stores (EINC_WGMMA_TMA_STORE=0), alternated; the copies on the fixed tile menu;
# sanitizers on the split store; then every GPU test.
#   (bash scripts/device_session19d.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
LKI="lki,jl->kji:i=384,j=376,k=376,l=384"
for r in 1 2; do
  echo "== split TMA store ($((SECONDS-T0))s)"; timeout 60 python3 scripts/case_bench.py bfloat16 $LKI
  timeout 60 python3 scripts/case_bench.py float16 $LKI
  echo "== threads' stores ($((SECONDS-T0))s)"; EINC_WGMMA_TMA_STORE=0 timeout 60 python3 scripts/case_bench.py bfloat16 $LKI
  EINC_WGMMA_TMA_STORE=0 timeout 60 python3 scripts/case_bench.py float16 $LKI
done
timeout 120 python3 scripts/step_breakdown.py
timeout 60 python3 scripts/case_bench.py bfloat16 "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96" "njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96"
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py "lki,jl->kji:i=192,j=100,k=5,l=64" bfloat16 2>&1 | tail -1
done
echo "== GPU tests ($((SECONDS-T0))s)"
TEST_S=300 source scripts/device_gpu_tests.sh
cp $OUT/gpu-tests.txt $OUT/gpu-tests-h200-20261203c.txt 2>/dev/null
echo "done $((SECONDS-T0))s"
