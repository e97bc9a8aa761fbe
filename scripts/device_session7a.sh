#!/usr/bin/env bash
# Session 7, call 1: short-K / output-bound tiles (ccsd_t, ao2mo) at every tile, and ncu on
# the fp32 and bf16 ccsd_t kernels. (bash scripts/device_session7a.sh)
set -u
source scripts/device_env.sh
T='amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24'
W="default wgmma128x128 wgmma128x128s3 wgmma256x128 wgmma128x256"
S="default 128x128x8 128x128x16 64x64x8"
python3 scripts/tile_sweep.py bfloat16 "$T" $W
python3 scripts/tile_sweep.py bfloat16 'bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' $W
python3 scripts/tile_sweep.py bfloat16 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' $W
python3 scripts/tile_sweep.py bfloat16 'bq,srqa->srba:a=96,b=84,q=96,r=84,s=84' $W
python3 scripts/tile_sweep.py float32 "$T" $S
python3 scripts/tile_sweep.py float32 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' $S
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,lts__t_sectors_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
for dt in float32 bfloat16; do
  echo "=== ncu $dt ccsd_t"
  timeout 90 ncu --clock-control none -k regex:einc_gett\|einc_wgmma --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py "$T" $dt 2>&1 | grep -E "einc_|duration|pct|sectors|bytes|registers|stalled|limit|inst_executed" | sed 's/  */ /g'
done
