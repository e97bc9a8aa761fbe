#!/usr/bin/env bash
# (EINC_F2D was an experiment switch in the tree of this call only: not kept, see benchmarks/NOTES.md.)
# Session 12, call a: is fp32 -> fp64 conversion (F2F.F64.F32, 16/clk/SM) what holds the
# fp64-fragment kernels (smallmn 72^5, skinny abk / cabk / akb) at ~50% DMMA busy?
# EINC_F2D=0 (cvt), 1 (integer bit moves + one DMUL: exact for finite), 2 (bit moves only:
# wrong values, the conversions' floor), alternated in one run; SASS counts; ncu pipes.
#   (bash scripts/device_session12a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
EINC_F2D=1 timeout 150 python3 -m pytest -q -x -n 4 -m gpu -p no:cacheprovider tests/test_smallmn.py tests/test_skinny.py 2>&1 | tail -2
echo "== tests (F2D=1) $((SECONDS-T0))s"
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
I="$T72 abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 akb,jk->jba:a=384,b=384,j=24,k=384"
for m in 0 1 2 0 1; do echo "== F2D=$m"; EINC_F2D=$m timeout 60 python3 scripts/case_bench.py float32 $I 2>&1 | tail -4 | cut -c1-110; done
echo "== benches $((SECONDS-T0))s"
for m in 0 1; do EINC_F2D=$m python3 - <<'PY'
import os, sys
sys.path.insert(0, "scripts")
from mma_tiles import sass_counts
from einc import api
from einc.codegen.cuda.emit import emit_step
for subs, shapes in [("abcd,dbea->ec", [(72,) * 4] * 2), ("abk,kj->bja", [(384, 376, 384), (384, 24)])]:
    p = api.plan_for(subs, shapes, "float32", backend="cuda")
    print("F2D", os.environ["EINC_F2D"], subs, sass_counts(emit_step(p, p.steps[0], "sm_90")))
PY
done
M=gpu__time_duration.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
for m in 0 1; do echo "== ncu F2D=$m"; EINC_F2D=$m timeout 60 ncu --clock-control none -k regex:einc_smallmn --launch-skip 1 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "duration|pct|ratio|ERR|rror" | sed 's/  */ /g' | cut -c1-110; done
echo "== ncu abk F2D=0"; timeout 60 ncu --clock-control none -k regex:einc_skinny --launch-skip 1 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "abk,kj->bja:a=384,b=376,j=24,k=384" float32 2>&1 | grep -E "duration|pct|ratio|rror" | sed 's/  */ /g' | cut -c1-110
echo "done $((SECONDS-T0))s"
