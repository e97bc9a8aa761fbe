#!/usr/bin/env bash
# One device call: skinny rows-per-thread A/B, the K-order copy cases, hardening + graph tests.
set -u
source scripts/device_env.sh
INTENSLI="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
KORDER="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72 lik,jkl->ji:i=384,j=376,k=384,l=384"
echo "== fp32, rows per thread by the rule"
timeout 150 python3 scripts/case_bench.py float32 $INTENSLI $KORDER 2>&1 | tail -11
echo "== fp32, EINC_SKINNY_RM=2"
EINC_SKINNY_RM=2 timeout 150 python3 scripts/case_bench.py float32 $INTENSLI 2>&1 | tail -9
echo "== gpu tests"
timeout 300 python3 -m pytest -q -rA -m gpu -p no:cacheprovider tests/test_gpu_hardening.py tests/test_cuda_graphs.py \
  tests/test_skinny.py tests/test_gpu_plan_rewrites.py 2>&1 | grep -E "^(PASSED|FAILED|ERROR)|passed|failed" | tee ${OUT:-/tmp}/gpu_tests.txt | grep -E "hardening|FAILED|ERROR|passed|failed" | tail -25
