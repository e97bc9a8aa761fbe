#!/usr/bin/env bash
# Session 12, call c: smallmn's partial sums innermost (a reduce_rows step), one row per
# thread on skinny's K-fast fp64 fragments; every GPU test; the main bench, TCCG-24 fp32 and
# the intensli cases (K-fast rows A/B); sanitizers on both changed paths.
#   (bash scripts/device_session12c.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
source scripts/device_gpu_tests.sh
echo "== tests $((SECONDS-T0))s"
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
I="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
KF="abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96"
v() { echo "== $*"; env "$@" timeout 80 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -n +2 | cut -c1-110; }
CASES="$T72 $I"; v EINC_X=0
CASES="$KF"; v EINC_SKINNY_KFAST_RM=2; v EINC_X=0; v EINC_SKINNY_KU=4; v EINC_SKINNY_KFAST_RM=2; v EINC_X=0
CASES="$T72"; v EINC_X=0
echo "== benches $((SECONDS-T0))s"
timeout 200 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$?"; tail -40 /tmp/main.txt | cut -c1-130
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo|intensli" /tmp/tccg-fp32.txt | cut -c1-120 | head -30
M=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
echo "== ncu 72^5 (both kernels)"; timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|grid|regis|pct" | sed 's/  */ /g' | cut -c1-110
echo "== ncu cabk"; timeout 60 ncu --clock-control none -k regex:einc --launch-skip 1 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96" float32 2>&1 | grep -E "einc_|duration|grid|regis|pct" | sed 's/  */ /g' | cut -c1-110
echo "== memcheck 72^5 / racecheck cabk / memcheck abk"
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "$T72" float32 2>&1 | tail -1
timeout 90 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/one_einsum.py "cabk,kj->cjba:a=48,b=36,c=36,j=24,k=96" float32 2>&1 | tail -1
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "abk,kj->bja:a=384,b=376,j=24,k=384" float32 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
