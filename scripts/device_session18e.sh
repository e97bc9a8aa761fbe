#!/usr/bin/env bash
# Session 18, call e: the C-apart tiles' TMA-store epilogue (EINC_WGMMA_TMA_STORE=1) against
# the default on ao2mo ap,srqp and two C-apart GEMMs, alternated; sanitizers on it; then every
# GPU test with the switch on (the WS test's store parametrisation among them).
#   (bash scripts/device_session18e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
AP="ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84"
G1="ij,jk->ik:i=16384,j=128,k=4096"
G2="ij,jk->ik:i=8192,j=256,k=4096"
for r in 1 2; do
  echo "== default ($((SECONDS-T0))s)"; timeout 60 python3 scripts/case_bench.py bfloat16 $AP $G1 $G2
  echo "== TMA store ($((SECONDS-T0))s)"; EINC_WGMMA_TMA_STORE=1 timeout 60 python3 scripts/case_bench.py bfloat16 $AP $G1 $G2
done
export EINC_WGMMA_TMA_STORE=1
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "ap,srqp->srqa:a=96,p=96,q=44,r=42,s=40" bfloat16 2>&1 | tail -1
timeout 60 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/one_einsum.py "ap,srqp->srqa:a=96,p=96,q=44,r=42,s=40" bfloat16 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck --report-api-errors no python3 scripts/one_einsum.py "ap,srqp->srqa:a=96,p=96,q=44,r=42,s=40" bfloat16 2>&1 | tail -1
echo "== GPU tests with EINC_WGMMA_TMA_STORE=1 ($((SECONDS-T0))s)"
TEST_S=240 source scripts/device_gpu_tests.sh
echo "done $((SECONDS-T0))s"
