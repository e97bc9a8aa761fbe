#!/usr/bin/env bash
# Session 8, closing call: every GPU test (the stream tests too), TCCG-24 bf16 and fp32 with
# plots, ccsd_t on the tiled kernels beside (EINC_STREAM=0), intensli and 72^5 through
# case_bench. Only the results go under $OUT. (bash scripts/device_session8e.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
TEST_S=260 source scripts/device_gpu_tests.sh
OUT=$OUT_KEEP
for dt in bfloat16 float32; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > /tmp/tccg-$dt.txt 2>&1
  echo "== TCCG-24 $dt rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-$dt.txt)"
  grep -E "ccsd_t|ao2mo|ccsd ij" /tmp/tccg-$dt.txt | cut -c1-150
done
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
for dt in float32 bfloat16; do
  echo "== ccsd_t $dt stream, then tiled ($((SECONDS-T0))s)"
  timeout 60 python3 scripts/case_bench.py $dt $CT 2>&1 | cut -c1-130
  EINC_STREAM=0 timeout 60 python3 scripts/case_bench.py $dt $CT 2>&1 | tail -4 | cut -c1-130
done
echo "== intensli fp32 and 72^5 ($((SECONDS-T0))s)"
timeout 60 python3 scripts/case_bench.py float32 "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384" \
  "cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96" "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | cut -c1-130
ls $OUT
echo "done $((SECONDS-T0))s"
