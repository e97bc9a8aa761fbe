#!/usr/bin/env bash
# Session 11, call a: smallmn on the fp64 tensor cores (fp32 steps). Its GPU tests, the SASS
# (DMMA count, registers), 72^5 and ragged sizes with DMMA against the FFMA tiles in the same
# run, ncu on the DMMA kernel, memcheck over the smallmn cases; last session's unrun table-copy
# test and a TMA memcheck.   (bash scripts/device_session11a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -4
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_mma.py -k "table_copies or tma_maps" 2>&1 | tail -3
echo "== tests $((SECONDS-T0))s"
python3 - <<'PY'
import sys; sys.path.insert(0, "scripts")
from mma_tiles import sass_counts
import einc.api
from einc.codegen.cuda.emit import emit_step
from einc.codegen.cuda import emit_smallmn
for dm in (True, False):
    emit_smallmn.DMMA = dm
    p = einc.api.plan_for("abcd,dbea->ec", [(72,) * 4] * 2, "float32", backend="cuda")
    k = emit_step(p, p.steps[0])
    print("dmma" if dm else "ffma", k.block, k.grid, k.smem, sass_counts(k))
PY
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
CASES="$T72 abcd,dbea->ec:a=70,b=70,c=70,d=70,e=70 abcd,dbea->ec:a=75,b=75,c=75,d=75,e=75 abcd,dbea->ec:a=72,b=72,c=70,d=72,e=75 abcd,dbea->ec:a=64,b=64,c=128,d=64,e=128"
for r in 1 2; do
echo "== dmma (round $r)"; timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -5
echo "== ffma (round $r)"; EINC_SMALLMN_DMMA=0 timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -5
done
v() { echo "== float32 $*"; env "$@" timeout 40 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1; }
v EINC_SMALLMN_BK=64
v EINC_SMALLMN_STAGES=4
v EINC_SMALLMN_STAGES=2
echo "== benches $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
echo "== ncu"; timeout 60 ncu --clock-control none -k regex:einc_smallmn --launch-skip 1 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|pct|registers|stalled|conflicts|ratio" | sed 's/  */ /g' | cut -c1-150
echo "== memcheck smallmn"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 scripts/smallmn_sanitize_cases.py 2>&1 | tail -3
echo "== memcheck TMA"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 python3 scripts/one_einsum.py "ij,jk->ik:i=4096,j=4096,k=4096" bfloat16 2>&1 | tail -3
echo "done $((SECONDS-T0))s"
