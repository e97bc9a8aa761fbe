#!/usr/bin/env bash
# Session 20, call b: where the SIMT gett loses to cuBLAS SGEMM (ncu, 4096^3, one launch
# each, alternated), and cuBLAS DGEMM's rate (the fp64 tensor cores' ceiling as cuBLAS
# reaches it).  (bash scripts/device_session20b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
python3 scripts/sgemm_pair.py 8192 --time
python3 scripts/sgemm_pair.py 4096 --time
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.sum,smsp__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,dram__bytes_read.sum,lts__t_bytes.sum
timeout 200 ncu --clock-control none --launch-skip 4 --launch-count 2 --metrics $M python3 scripts/sgemm_pair.py 4096 2>&1 \
  | grep -vE "^==PROF==|^ *-+ *$" | sed 's/  */ /g' | grep -vE "^ *$"
echo "done $((SECONDS-T0))s"
