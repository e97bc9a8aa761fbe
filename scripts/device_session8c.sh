#!/usr/bin/env bash
# Session 8, stream on tensor cores, warp-local C staging: the stream GPU tests, TCCG ccsd_t fp32 and bf16 on
# stream against the tiled kernels (EINC_STREAM=0) beside torch.einsum, ncu on one bf16 and
# one fp32 launch, memcheck and racecheck on a small bf16 case whose blocks walk several
# tiles. (bash scripts/device_session8c.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -rs -m gpu -p no:cacheprovider tests/test_stream.py 2>&1 | grep -E "FAILED|Error|passed|failed" | head -20
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
for dt in bfloat16; do
  echo "== $dt stream ($((SECONDS-T0))s)"; timeout 60 python3 scripts/case_bench.py $dt $CT 2>&1 | cut -c1-140
  echo "== $dt tiled, EINC_STREAM=0 ($((SECONDS-T0))s)"; EINC_STREAM=0 timeout 60 python3 scripts/case_bench.py $dt $CT 2>&1 | cut -c1-140
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read.sum
for dt in bfloat16; do
echo "== ncu $dt ($((SECONDS-T0))s)"
timeout 90 ncu --clock-control none -k regex:einc_stream --launch-skip 2 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" $dt 2>&1 \
  | grep -E "einc_|duration|pct|bytes|registers|stalled|inst_executed|ratio|sectors" | sed 's/  */ /g' | cut -c1-110
done
echo "== sanitizers ($((SECONDS-T0))s)"
SMALL="amji,cbkm->kjicba:a=24,b=20,c=20,i=12,j=20,k=11,m=24"  # 1575 tiles, ~6 per block
EINC_STREAM=1 timeout 60 compute-sanitizer --tool memcheck python3 scripts/one_einsum.py "$SMALL" bfloat16 2>&1 | tail -1
EINC_STREAM=1 timeout 90 compute-sanitizer --tool racecheck python3 scripts/one_einsum.py "$SMALL" bfloat16 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
