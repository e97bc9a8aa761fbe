#!/usr/bin/env bash
# Session 21, call c: DM tiles of 32x32 warp pieces (16 warps an SM at <= 128 registers)
# against the 64x32-piece 64x128x16d; ncu of the 4096^3 GEMM.  (bash scripts/device_session21c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -x -m gpu tests/test_gett_dm.py -k "16ds" 2>&1 | tail -3
echo "== tiles ($((SECONDS-T0))s)"
BIG_TILES_CASES="ij,jk->ik,ki,jk->ji,lki,jl->kji,kli,lj->kji,njmi,kmln->lkji,lnim,kmjn->lkji" \
  timeout 300 python3 scripts/big_tiles.py 64x128x16d 128x128x16ds 64x128x16ds
M=gpu__time_duration.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
for t in 128x128x16ds; do
  echo "=== ncu $t"
  EINC_GETT_BIG_TILE=$t timeout 90 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py 'ij,jk->ik:i=4096,j=4096,k=4096' 2>&1 | grep -E "duration|pct|registers|stalled|conflicts|inst_executed" | sed 's/  */ /g'
done
echo "done $((SECONDS-T0))s"
