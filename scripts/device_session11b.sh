#!/usr/bin/env bash
# Session 11, call b: smallmn on m16n8k16 fp64 fragments (call a: m8n8k4 ran at half the fp64
# tensor rate, 0.257 ms against FFMA's 0.196). GPU tests, SASS, tile / k-group / slice sweep on
# 72^5 against FFMA in the same run, ncu.   (bash scripts/device_session11b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -3
python3 - <<'PY'
import sys; sys.path.insert(0, "scripts")
from mma_tiles import sass_counts
import einc.api
from einc.codegen.cuda.emit import emit_step
p = einc.api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
k = emit_step(p, p.steps[0])
print(k.block, k.grid, k.smem, sass_counts(k))
PY
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
CASES="$T72 abcd,dbea->ec:a=70,b=70,c=70,d=70,e=70 abcd,dbea->ec:a=75,b=75,c=75,d=75,e=75 abcd,dbea->ec:a=64,b=64,c=128,d=64,e=64"
echo "== default"; timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -4
echo "== ffma"; EINC_SMALLMN_DMMA=0 timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -4
v() { echo "== $*"; env "$@" timeout 40 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1; }
v EINC_SMALLMN_KG=1
v EINC_SMALLMN_KG=1 EINC_SMALLMN_DTILE=1,9
v EINC_SMALLMN_DTILE=1,5
v EINC_SMALLMN_DTILE=1,5 EINC_SMALLMN_KG=2
v EINC_SMALLMN_BK=64
v EINC_SMALLMN_STAGES=4
v EINC_SMALLMN_STAGES=2
v EINC_SMALLMN_DMMA=0
v EINC_SMALLMN_DMMA=1
echo "== benches $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
echo "== ncu"; timeout 60 ncu --clock-control none -k regex:einc_smallmn --launch-skip 1 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "duration|pct|registers|stalled|conflicts|ratio|limit" | sed 's/  */ /g' | cut -c1-150
echo "done $((SECONDS-T0))s"
