#!/usr/bin/env bash
# Session 19, call c: the transpose kernel at <= 64 registers (32-bit in-tile offsets, 4 loads
# in flight, launch bounds 4 blocks/SM) after 19b's 255-register build ran slower than the
# old 64x64 tiles; the two ccsd ijkl plans with A copied too.
#   (bash scripts/device_session19c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
for r in 1 2; do
  echo "== copies ($((SECONDS-T0))s)"; timeout 120 python3 scripts/step_breakdown.py
done
EINC_COPY_TABLED_C=1 timeout 60 python3 scripts/case_bench.py bfloat16 "lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96" "njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96" "njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84"
for c in "njmi->jinm:i=40,j=36,m=44,n=5" "abc->acb:a=3,b=130,c=70"; do
  timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "$c" bfloat16 2>&1 | tail -1
done
echo "done $((SECONDS-T0))s"
