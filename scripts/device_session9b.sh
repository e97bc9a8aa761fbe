#!/usr/bin/env bash
# Session 9, skinny's last wave in K ranges: every GPU test, intensli fp32 with K ranges and
# with halves (EINC_SKINNY_KSPLIT=0) beside torch.einsum, TCCG-24 fp32, ncu on akb, the
# sanitizers on small split launches. (bash scripts/device_session9b.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
TEST_S=260 source scripts/device_gpu_tests.sh
cp /tmp/gpu-out/gpu-tests.txt $OUT_KEEP/ 2>/dev/null
OUT=$OUT_KEEP
IL="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96
 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36
 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
for r in 1 2; do
echo "== intensli fp32, K ranges ($((SECONDS-T0))s)"
timeout 90 python3 scripts/case_bench.py float32 $IL 2>&1 | cut -c1-130
echo "== intensli fp32, halves: EINC_SKINNY_KSPLIT=0 ($((SECONDS-T0))s)"
EINC_SKINNY_KSPLIT=0 timeout 60 python3 scripts/case_bench.py float32 "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384" 2>&1 | tail -2 | cut -c1-130
done
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "intensli" /tmp/tccg-fp32.txt | cut -c1-150
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__inst_executed.sum
for c in "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384"; do
echo "== ncu $c ($((SECONDS-T0))s)"
timeout 60 ncu --clock-control none -k regex:"einc_skinny" --launch-skip 2 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "$c" float32 2>&1 | grep -E "duration|pct|registers|inst_executed|cycles" | sed 's/  */ /g' | cut -c1-100
done
echo "== sanitizers ($((SECONDS-T0))s)"
for v in mfast kfast; do
timeout 60 compute-sanitizer --tool memcheck python3 scripts/skinny_ksplit_case.py $v 2>&1 | tail -2
timeout 90 compute-sanitizer --tool racecheck python3 scripts/skinny_ksplit_case.py $v 2>&1 | tail -2
done
echo "done $((SECONDS-T0))s"
