#!/usr/bin/env bash
# Session 9, closing call: every GPU test, TCCG-24 bf16 and fp32 with plots, intensli and
# 72^5 through case_bench (with K ranges beside on akb/abk), the main benchmark (GEMMs,
# tensor cores, reduce). Results under $OUT. (bash scripts/device_session9d.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
TEST_S=240 source scripts/device_gpu_tests.sh
cp /tmp/gpu-out/gpu-tests.txt $OUT_KEEP/ 2>/dev/null
OUT=$OUT_KEEP
for dt in bfloat16 float32; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > /tmp/tccg-$dt.txt 2>&1
  echo "== TCCG-24 $dt rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-$dt.txt)"
done
IL="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96
 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36
 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36 abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
echo "== intensli fp32 and 72^5 ($((SECONDS-T0))s)"
timeout 90 python3 scripts/case_bench.py float32 $IL 2>&1 | cut -c1-120
echo "== akb, abk with K ranges (EINC_SKINNY_KSPLIT=1)"
EINC_SKINNY_KSPLIT=1 timeout 60 python3 scripts/case_bench.py float32 "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384" 2>&1 | tail -2 | cut -c1-120
echo "== main benchmark ($((SECONDS-T0))s)"
timeout 200 python3 -m einc bench --backend cuda > /tmp/main-bench.txt 2>&1
echo "rc=$?"; grep -iE "gemm|reduce|dot|int8|tf32|bf16|fp16|saved" /tmp/main-bench.txt | cut -c1-140 | head -30
echo "done $((SECONDS-T0))s"
