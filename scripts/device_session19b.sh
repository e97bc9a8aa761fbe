#!/usr/bin/env bash
# Session 19, call b: the transpose kernel's extent-fitted tiles with vector loads/stores and
# the rows copy (kernels/transpose.cuh) on the ccsd ijkl GEMM-order copies; lnim,kmjn with
# A copied too (EINC_COPY_TABLED_C=1); memcheck/racecheck on both copy kernels.
#   (bash scripts/device_session19b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
for r in 1 2; do
  echo "== new copies ($((SECONDS-T0))s)"; timeout 120 python3 scripts/step_breakdown.py
done
echo "== lnim,kmjn with A copied too ($((SECONDS-T0))s)"
EINC_COPY_TABLED_C=1 timeout 60 python3 scripts/case_bench.py bfloat16 "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96" "njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96"
timeout 60 python3 scripts/case_bench.py bfloat16 "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96"
timeout 60 python3 scripts/case_bench.py float32 "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96" "njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96"
for c in "njmi->jinm:i=40,j=36,m=44,n=5" "lnim->linm:i=40,l=5,m=48,n=7" "abc->acb:a=3,b=130,c=70"; do
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py "$c" bfloat16 2>&1 | tail -1
  done
done
echo "done $((SECONDS-T0))s"
