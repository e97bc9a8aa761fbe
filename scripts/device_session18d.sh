#!/usr/bin/env bash
# Session 18, call d: ncu on the steps the session changed -- stream_mma's shared bank
# conflicts after the swizzle (session 15: 2.6 M), ws1p on ap,srqp with B resident (session
# 15: 76.8 us, DRAM 55%) -- and on bf16 lki,jl (the suite's 0.70).  (bash scripts/device_session18d.sh)
set -u
source scripts/device_env.sh
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_bytes.sum,launch__registers_per_thread,launch__grid_size,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed.sum
prof() {  # dtype case [launch count]
  echo "=== $1 $2"
  timeout 90 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count ${3:-1} --metrics $M \
    python3 scripts/one_einsum.py "$2" $1 2>&1 | grep -E "einc_|duration|pct|bytes|registers|grid_size|stalled|conflicts|inst_executed" | sed 's/  */ /g'
}
prof bfloat16 'amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' 2
prof bfloat16 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'
prof bfloat16 'lki,jl->kji:i=384,j=376,k=376,l=384'
