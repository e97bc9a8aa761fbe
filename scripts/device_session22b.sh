#!/usr/bin/env bash
# Session 22, call b: stream_mma storing C by TMA boxes (cbox.py) -- GPU tests, the
# sanitizers, ccsd_t bf16 against the threads' stores (EINC_STREAM_BOX=0), alternated; ncu.
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 200 python3 -m pytest -q -m gpu tests/test_stream.py 2>&1 | tail -4
echo "--- sanitizers $((SECONDS-T0))s"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/box_sanitize_case.py 2>&1 | tail -3
done
echo "--- bench $((SECONDS-T0))s"
C='amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24'
for r in 1 2; do
  echo "box"; timeout 100 python3 scripts/case_bench.py bfloat16 $C 2>&1 | tail -4
  echo "threads"; EINC_STREAM_BOX=0 timeout 100 python3 scripts/case_bench.py bfloat16 $C 2>&1 | tail -4
done
timeout 60 python3 scripts/timeline.py bfloat16 'bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' 2>&1 | grep -v -i warn
echo "--- ncu $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
timeout 100 ncu --clock-control none -k regex:einc_stream --launch-skip 2 --launch-count 1 --metrics $M python3 scripts/one_einsum.py 'bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' bfloat16 2>&1 | grep -E "einc_|duration|pct|bytes|registers|stalled|inst_executed" | sed 's/  */ /g'
echo "done $((SECONDS-T0))s"
