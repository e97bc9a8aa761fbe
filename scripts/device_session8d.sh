#!/usr/bin/env bash
# Session 8: stream_mma with paired conversions and the read-out loads first; bf16 ccsd_t
# along M (default) and along N, ncu on a fast and a slow case. (bash scripts/device_session8d.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -rs -m gpu -p no:cacheprovider tests/test_stream.py -k mma 2>&1 | grep -E "FAILED|Error|passed|failed" | head -20
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
echo "== bf16 stream ($((SECONDS-T0))s)"; timeout 60 python3 scripts/case_bench.py bfloat16 $CT 2>&1 | cut -c1-140
echo "== bf16 stream along N ($((SECONDS-T0))s)"; EINC_STREAM_ALONG=n timeout 60 python3 scripts/case_bench.py bfloat16 $CT 2>&1 | cut -c1-140
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_write.sum
for c in "amji,cbkm->kjicba" "bmki,cajm->kjicba"; do
echo "== ncu $c ($((SECONDS-T0))s)"
timeout 60 ncu --clock-control none -k regex:einc_ --launch-skip 4 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$c:a=24,b=20,c=20,i=24,j=20,k=20,m=24" bfloat16 2>&1 \
  | grep -E "einc_|duration|pct|bytes|stalled|inst_executed|ratio|sectors" | sed 's/  */ /g' | cut -c1-110
done
echo "done $((SECONDS-T0))s"
