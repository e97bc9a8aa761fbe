#!/usr/bin/env bash
# Session 20, call d: the 4-warp DM tiles (2 blocks per SM) against the SIMT default and
# 128x128x8d on fp32 GEMM-like einsums; ncu of each DM tile on the 4096^3 GEMM (DMMA pipe,
# stalls).  (bash scripts/device_session20d.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 200 python3 scripts/big_tiles.py auto 128x64x8d 64x128x8d 128x128x8d
M=gpu__time_duration.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,lts__t_bytes.sum
for t in 128x128x8d 128x64x8d; do
  echo "=== ncu $t"
  EINC_GETT_BIG_TILE=$t timeout 90 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py 'ij,jk->ik:i=4096,j=4096,k=4096' 2>&1 | grep -E "einc_|duration|pct|bytes|registers|size|stalled|conflicts|inst_executed" | sed 's/  */ /g'
done
echo "done $((SECONDS-T0))s"
