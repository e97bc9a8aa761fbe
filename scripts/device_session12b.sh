#!/usr/bin/env bash
# (EINC_SMALLMN_BK=128 was accepted by the tree of this call only: not kept.)
# Session 12, call b: the reduce over smallmn's partial tiles with 32 slices of ~8 terms
# (was 8 of ~30: latency-bound, 7 us at 72^5); 128-k smallmn slices; host time per call
# (einc and torch.einsum, cProfile of einc's); skinny K-fast variants on abk / cabk.
#   (bash scripts/device_session12b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 100 python3 -m pytest -q -x -n 4 -m gpu -p no:cacheprovider tests/test_smallmn.py tests/test_cuda_backend.py -k "reduce or smallmn or sum" 2>&1 | tail -2
echo "== tests $((SECONDS-T0))s"
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
ABK="abk,kj->bja:a=384,b=376,j=24,k=384"; CABK="cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96"
v() { echo "== $*"; env "$@" timeout 60 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -n +2 | cut -c1-110; }
CASES="$T72"; v EINC_X=0; v EINC_SMALLMN_BK=128; v EINC_X=0; v EINC_SMALLMN_BK=128
CASES="$ABK $CABK"; v EINC_X=0; v EINC_SKINNY_S=6; v EINC_SKINNY_S=8; v EINC_SKINNY_KFAST_RM=1; v EINC_SKINNY_KU=4; v EINC_SKINNY_KU=16; v EINC_X=0
echo "== benches $((SECONDS-T0))s"
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed
echo "== ncu 72^5 (both kernels)"; timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|grid|block|pct" | sed 's/  */ /g' | cut -c1-110
echo "== host"; timeout 120 python3 scripts/host_overhead.py "abcd,dbea->ec:a=4,b=4,c=4,d=4,e=4" "$T72" "$ABK" 2>&1 | grep -v "^$" | cut -c1-150 | head -70
echo "done $((SECONDS-T0))s"
