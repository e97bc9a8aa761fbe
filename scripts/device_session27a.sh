#!/usr/bin/env bash
# Session 27, call a: which card; where einc's host time per call goes (cProfile, both orders);
# the 192x192 tile's SASS; TCCG-24 bf16 and fp32 with today's defaults.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
echo "--- host $((SECONDS-T0))s"
AQ='ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'
HOST_SORT=tottime,cumulative HOST_LINES=28 timeout 60 python3 scripts/host_overhead.py bfloat16 $AQ 'ij,jk->ik:i=64,j=64,k=64' 2>&1 | grep -v Warn | cut -c1-150
echo "--- sass $((SECONDS-T0))s"
python3 scripts/sass_192.py /tmp/k192.cubin && cuobjdump --dump-sass /tmp/k192.cubin | grep -o "HGMMA\.[0-9x]*[^ ]*" | sort | uniq -c | head -4
echo "--- suite bf16 $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | tail -27
echo "--- suite fp32 $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | tail -27
echo "done $((SECONDS-T0))s"
