#!/usr/bin/env bash
# One device call for the smallmn kernel: its GPU tests, abcd,dbea->ec beside torch.einsum
# (72^5 fp32 and fp64, ragged 70/75, the experiment switches), ncu on the kernel, and
# compute-sanitizer memcheck on its cases.   bash scripts/device_smallmn.sh
set -u
source scripts/device_env.sh
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
CASES="$T72 abcd,dbea->ec:a=70,b=70,c=70,d=70,e=70 abcd,dbea->ec:a=75,b=75,c=75,d=75,e=75 abcd,dbea->ec:a=72,b=72,c=70,d=72,e=75"
echo "== float32"; timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -5
v() { echo "== float32 $*"; env "$@" timeout 40 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1; }
v EINC_SMALLMN_BK=64                      # 64-k slices, 2 stages (half the barriers)
v EINC_SMALLMN_STAGES=4                    # (measured slower than 3 at 32 k)
v EINC_SMALLMN_MINB=1 EINC_SMALLMN_QU=8    # one block per SM, quads fully unrolled (168 registers)
v EINC_SMALLMN_MINB=1 EINC_SMALLMN_QU=2 EINC_SMALLMN_BK=64
v EINC_SMALLMN_OCTETS=1                    # thread order without quarter-warp bank conflicts on B
v EINC_SMALLMN_OCTETS=1 EINC_SMALLMN_BK=64
echo "== float64"; timeout 40 python3 scripts/case_bench.py float64 $T72 2>&1 | tail -1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
echo "== ncu"; timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|pct|registers|stalled|conflicts|inst_executed|limit" | sed 's/  */ /g'
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -3
echo "== memcheck"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 scripts/smallmn_sanitize_cases.py 2>&1 | tail -3
echo "rc=${PIPESTATUS[0]}"
