#!/usr/bin/env bash
# Session 9, K ranges again (combine loads batched, B by cp.async): skinny + graph GPU tests,
# intensli fp32 on this tree (ranges; halves; 4 and 2 ranges) and on session 8's tree
# ($1, same run), ncu on akb. (bash scripts/device_session9c.sh ../.wtb)
set -u
BASE=$1
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -x -m gpu -n 8 -p no:cacheprovider tests/test_skinny.py tests/test_skinny_mma.py tests/test_cuda_graphs.py 2>&1 | tail -2
IL="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96
 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36
 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
TWO="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384"
for r in 1 2; do
echo "== round $r: this tree, defaults ($((SECONDS-T0))s)"
timeout 90 python3 scripts/case_bench.py float32 $IL 2>&1 | tail -8 | cut -c1-112
echo "== session 8's tree"
(cd $BASE && PYTHONPATH=/tmp/site:$PWD timeout 90 python3 scripts/case_bench.py float32 $IL 2>&1 | tail -8 | cut -c1-112)
for v in "EINC_SKINNY_KSPLIT=0" "EINC_SKINNY_KPARTS=6" "EINC_SKINNY_KPARTS=3"; do
echo "== $v"; env $v timeout 60 python3 scripts/case_bench.py float32 $TWO 2>&1 | tail -2 | cut -c1-112
done
done
M=gpu__time_duration.sum,smsp__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__inst_executed.sum
for c in "akb,jk->jba:a=384,b=384,j=24,k=384" "cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36"; do
echo "== ncu $c ($((SECONDS-T0))s)"
timeout 60 ncu --clock-control none -k regex:"einc_skinny" --launch-skip 2 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "$c" float32 2>&1 | grep -E "duration|pct|registers|inst_executed|cycles" | sed 's/  */ /g' | cut -c1-100
done
echo "done $((SECONDS-T0))s"
