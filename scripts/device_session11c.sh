#!/usr/bin/env bash
# Session 11, call c: smallmn fragments with one k-group and 64-k slices (11b's fastest pieces),
# swept against FFMA in one run; ncu on both kernels of the call.   (bash scripts/device_session11c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -2
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
CASES="$T72 abcd,dbea->ec:a=70,b=70,c=70,d=70,e=70 abcd,dbea->ec:a=75,b=75,c=75,d=75,e=75 abcd,dbea->ec:a=64,b=64,c=128,d=64,e=64"
echo "== default"; timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -4
v() { echo "== $*"; env "$@" timeout 40 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1; }
v EINC_SMALLMN_DMMA=0
v EINC_SMALLMN_BK=32
v EINC_SMALLMN_DTILE=1,5
v EINC_SMALLMN_DTILE=1,9
v EINC_SMALLMN_DTILE=1,9 EINC_SMALLMN_BK=32
v EINC_SMALLMN_STAGES=2
v EINC_SMALLMN_DTILE=1,5 EINC_SMALLMN_STAGES=2
v EINC_SMALLMN_DMMA=1
v EINC_SMALLMN_DMMA=0
echo "== benches $((SECONDS-T0))s"
M=gpu__time_duration.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
echo "== ncu"; timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|pct|registers|ratio" | sed 's/  */ /g' | cut -c1-120
echo "done $((SECONDS-T0))s"
