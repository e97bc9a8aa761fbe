#!/usr/bin/env bash
# ncu over the TCCG-24 cases below 1x torch.einsum: one launch each (the third call), the
# throughput and stall counters that say what bounds it. (bash scripts/device_profile.sh)
set -u
source scripts/device_env.sh
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_write.sum,dram__bytes_write.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
prof() {  # dtype case [launch count]
  echo "=== $1 $2"
  timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count ${3:-1} --metrics $M \
    python3 scripts/one_einsum.py "$2" $1 2>&1 | grep -E "einc_|duration|pct|sectors|bytes|registers|stalled|conflicts|inst_executed" | sed 's/  */ /g'
}
prof float32 'amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24'
prof bfloat16 'amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24'
prof float32 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'
prof float32 'lik,jkl->ji:i=384,j=376,k=384,l=384' 3
prof bfloat16 'lki,jl->kji:i=384,j=376,k=376,l=384'
prof bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248'
