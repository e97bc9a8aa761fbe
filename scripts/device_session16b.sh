#!/usr/bin/env bash
# Session 16, call b: smallmn's flat split with parts striding through the slices (neighbouring
# slices on the resident blocks at once) against the cut; memcheck of both with the errors
# shown.   (bash scripts/device_session16b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -2
C="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
for f in 1 0; do
  echo "== memcheck flat=$f ($((SECONDS-T0))s)"
  EINC_SMALLMN_FLAT=$f timeout 120 compute-sanitizer --tool memcheck --print-limit 3 python3 scripts/one_einsum.py $C 2>&1 | grep -vE "^=========     (Host|#)" | head -30 | cut -c1-200
done
echo "== 72^5 A/B ($((SECONDS-T0))s)"
for f in 1 0 1 0 1; do EINC_SMALLMN_FLAT=$f timeout 60 python3 scripts/smallmn_ab.py; done
for f in 1 0; do
  echo "== ncu flat=$f ($((SECONDS-T0))s)"
  EINC_SMALLMN_FLAT=$f timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 2 --metrics gpu__time_duration.sum,dram__bytes_read.sum,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
    python3 scripts/one_einsum.py $C 2>&1 | grep -E "^  [a-z_]+|duration|bytes|pct|ratio" | sed 's/  */ /g' | cut -c1-120
done
echo "done $((SECONDS-T0))s"
