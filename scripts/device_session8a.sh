#!/usr/bin/env bash
# Session 8, first stream-kernel call: its GPU tests, TCCG ccsd_t fp32 on stream against gett
# (EINC_STREAM=0) beside torch.einsum, ncu on one launch, memcheck and racecheck on a small
# case whose blocks walk several tiles. (bash scripts/device_session8a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -rs -m gpu -p no:cacheprovider tests/test_stream.py 2>&1 | tail -4
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
echo "== stream ($((SECONDS-T0))s)"; timeout 60 python3 scripts/case_bench.py float32 $CT 2>&1 | cut -c1-140
echo "== gett, EINC_STREAM=0 ($((SECONDS-T0))s)"; EINC_STREAM=0 timeout 60 python3 scripts/case_bench.py float32 $CT 2>&1 | cut -c1-140
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,smsp__inst_executed_op_ffma.sum
echo "== ncu ($((SECONDS-T0))s)"
timeout 90 ncu --clock-control none -k regex:einc_stream --launch-skip 2 --launch-count 1 --metrics $M \
  python3 scripts/one_einsum.py "amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" float32 2>&1 \
  | grep -E "einc_|duration|pct|bytes|registers|stalled|conflicts|inst_executed|ratio" | sed 's/  */ /g' | cut -c1-120
echo "== sanitizers ($((SECONDS-T0))s)"
SMALL="amji,cbkm->kjicba:a=24,b=20,c=20,i=12,j=20,k=11,m=24"  # 1575 tiles, ~6 per block
EINC_STREAM=1 timeout 60 compute-sanitizer --tool memcheck python3 scripts/one_einsum.py "$SMALL" float32 2>&1 | tail -1
EINC_STREAM=1 timeout 90 compute-sanitizer --tool racecheck python3 scripts/one_einsum.py "$SMALL" float32 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
