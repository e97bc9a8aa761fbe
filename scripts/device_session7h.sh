#!/usr/bin/env bash
# Session 7, closing call (the device budget left ~330 s): both TCCG-24 suites with plots
# (every case checked against torch.einsum), intensli in both dtypes and 72^5 through
# case_bench, then the GPU tests of this session's kernels in what time is left.
# (bash scripts/device_session7h.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
for dt in bfloat16 float32; do
  timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > /tmp/tccg-$dt.txt 2>&1
  echo "== TCCG-24 $dt rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-$dt.txt)"
  grep -E "MISMATCH|Error" /tmp/tccg-$dt.txt | head -5
done
I="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96
abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36
akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
echo "== case_bench ($((SECONDS-T0))s)"
timeout 45 python3 scripts/case_bench.py float32 $I "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | cut -c1-130
timeout 35 python3 scripts/case_bench.py bfloat16 $I 2>&1 | cut -c1-130
echo "== tests ($((SECONDS-T0))s)"
timeout $((300 - SECONDS + T0 > 20 ? 300 - SECONDS + T0 : 20)) python3 -m pytest -q -x -m gpu -p no:cacheprovider \
  tests/test_skinny_mma.py tests/test_gpu_plan_rewrites.py tests/test_mma.py 2>&1 | tail -3
ls $OUT
