#!/usr/bin/env bash
# Session 21, call e: the DM loaders' whole-slice fast path (walking pointers, no per-slice
# bounds) -- GPU tests, tiles A/B, ncu and SASS counts of 64x128x16d.  (bash scripts/device_session21e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -x -m gpu tests/test_gett_dm.py 2>&1 | tail -3
EINC_GETT_BIG_TILE=64x128x16d python3 scripts/sass_dm.py 'ij,jk->ik' 4096 | tail -1
echo "== tiles ($((SECONDS-T0))s)"
BIG_TILES_CASES="ij,jk->ik;ki,jk->ji;lki,jl->kji;kli,lj->kji;lik,jkl->ji;njmi,kmln->lkji;lnim,kmjn->lkji" \
  timeout 300 python3 scripts/big_tiles.py auto 64x128x16d 64x128x16ds 128x128x16d
M=gpu__time_duration.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum
echo "=== ncu 64x128x16d"
EINC_GETT_BIG_TILE=64x128x16d timeout 90 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py 'ij,jk->ik:i=4096,j=4096,k=4096' 2>&1 | grep -E "duration|pct|stalled|inst_executed" | sed 's/  */ /g'
echo "done $((SECONDS-T0))s"
