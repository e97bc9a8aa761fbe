#!/usr/bin/env bash
# Session 22, call c: the C-by-boxes stream_mma after the twin-table fix and longer box rows
# (amji's map (240, 40, 9600)) -- GPU tests of the stream kernels, ncu kernel times of the
# four ccsd_t cases with boxes and with the threads' stores (EINC_STREAM_BOX=0).
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 200 python3 -m pytest -q -m gpu tests/test_stream.py 2>&1 | grep -E "FAILED|passed|failed|Error" | head -20
echo "--- ncu $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
for c in 'amji,cbkm->kjicba' 'bmji,cakm->kjicba' 'cmji,bakm->kjicba' 'bmki,cajm->kjicba'; do
  for box in 1 0; do
    echo "== $c box=$box"
    EINC_STREAM_BOX=$box timeout 60 ncu --clock-control none -k regex:einc_stream --launch-skip 2 --launch-count 1 --metrics $M python3 scripts/one_einsum.py "$c:a=24,b=20,c=20,i=24,j=20,k=20,m=24" bfloat16 2>&1 | grep -E "duration|pct|bytes|inst_executed" | sed 's/  */ /g'
  done
done
echo "done $((SECONDS-T0))s"
