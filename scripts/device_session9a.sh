#!/usr/bin/env bash
# Session 9, baseline call: every GPU test on session 8's last commit (its review commits were
# never run on the GPU), TCCG-24 fp32, intensli + 72^5 through case_bench, ncu on the skinny
# kernel (akb, abk) and smallmn (72^5). (bash scripts/device_session9a.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
TEST_S=260 source scripts/device_gpu_tests.sh
cp /tmp/gpu-out/gpu-tests.txt $OUT_KEEP/ 2>/dev/null
OUT=$OUT_KEEP
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
IL="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96
 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36
 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36 abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
echo "== intensli fp32 and 72^5 ($((SECONDS-T0))s)"
timeout 90 python3 scripts/case_bench.py float32 $IL 2>&1 | cut -c1-130
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
for c in "akb,jk->jba:a=384,b=384,j=24,k=384" "abk,kj->bja:a=384,b=376,j=24,k=384" "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"; do
echo "== ncu $c ($((SECONDS-T0))s)"
timeout 90 ncu --clock-control none -k regex:"einc_(skinny|smallmn)" --launch-skip 2 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "$c" float32 2>&1 \
  | grep -E "einc_|duration|pct|bytes|registers|stalled|inst_executed|ratio|sectors|cycles|conflicts" | sed 's/  */ /g' | cut -c1-110
done
echo "done $((SECONDS-T0))s"
