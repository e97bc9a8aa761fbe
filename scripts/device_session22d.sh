#!/usr/bin/env bash
# Session 22, call d: ccsd_t cmji with box rows of whole sectors (96 wide) against the
# threads' stores (ncu), then TCCG-24 bf16 with C by boxes.
set -u
source scripts/device_env.sh
T0=$SECONDS
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active
for box in 1 0; do
  echo "== cmji box=$box"
  EINC_STREAM_BOX=$box timeout 60 ncu --clock-control none -k regex:einc_stream --launch-skip 2 --launch-count 1 --metrics $M python3 scripts/one_einsum.py "cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" bfloat16 2>&1 | grep -E "duration|pct" | sed 's/  */ /g'
done
echo "--- suite $((SECONDS-T0))s"
timeout 250 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | tail -30
echo "done $((SECONDS-T0))s"
