#!/usr/bin/env bash
# Session 12, call d (closing): the final tree (smallmn's partial tiles back outermost: the
# innermost layout of call c made the kernel's stores scattered, 0.172-0.180 ms); the main
# bench for the 72^5 row; K-fast one-row fragments against stage counts and one block per SM.
#   (bash scripts/device_session12d.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_smallmn.py tests/test_skinny.py tests/test_cuda_backend.py 2>&1 | tail -2
echo "== tests $((SECONDS-T0))s"
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
KF="abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96"
v() { echo "== $*"; env "$@" timeout 80 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -n +2 | cut -c1-110; }
CASES="$T72"; v EINC_X=0
CASES="$KF"; v EINC_X=0; v EINC_SKINNY_S=3; v EINC_SKINNY_S=6; v EINC_SKINNY_DM_MINB=1; v EINC_X=0; v EINC_SKINNY_S=6
CASES="$T72"; v EINC_X=0
echo "== benches $((SECONDS-T0))s"
timeout 200 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$?"; tail -24 /tmp/main.txt | cut -c1-130
M=gpu__time_duration.sum,launch__grid_size
echo "== ncu 72^5 (both kernels)"; timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|grid" | sed 's/  */ /g' | cut -c1-110
echo "done $((SECONDS-T0))s"
