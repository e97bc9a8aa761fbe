#!/usr/bin/env bash
# Session 7, last call: every GPU test (the skinny_mma tests too), TCCG-24 bf16 and fp32 with
# plots, intensli (both dtypes) and 72^5 through case_bench.
# Only the results go under $OUT.
# (bash scripts/device_session7g.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
source scripts/device_gpu_tests.sh
OUT=$OUT_KEEP
for dt in bfloat16 float32; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > /tmp/tccg-$dt.txt 2>&1
  echo "== TCCG-24 $dt rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-$dt.txt)"
done
echo "== intensli and 72^5 through case_bench (same run as the suite) ($((SECONDS-T0))s)"
timeout 60 python3 scripts/case_bench.py float32 "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384" \
  "akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96" "abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84" "cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96" \
  "cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36" "akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48" \
  "dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36" "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | cut -c1-130

timeout 60 python3 scripts/case_bench.py bfloat16 "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384" \
  "akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96" "abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84" "cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96" \
  "cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36" "akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48" \
  "dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36" 2>&1 | cut -c1-130
ls $OUT
if [ "${MAIN:-0}" = 1 ]; then  # the main bench (GEMMs against cuBLAS / torch._int_mm, reductions)
  timeout 150 python3 -m einc bench --backend cuda > /tmp/main-bench.txt 2>&1; echo "== main bench rc=$?"
  grep -E "ij,jk|ik,jk|int8|tf32|->i |dot" /tmp/main-bench.txt | cut -c1-150 | head -24
fi
