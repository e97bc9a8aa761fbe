#!/usr/bin/env bash
# Session 28, call a: today's tree on the lent card (both TCCG-24 suites, main bench), then the
# 2-CTA cluster variant of 192x192wsp (EINC_WGMMA_CLUSTER=1): occupancy, its GPU tests, and ncu
# against the plain tile -- with multicast, without it (clusters and pairs only), and capped.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
echo "--- suite bf16 $((SECONDS-T0))s"
timeout 200 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | tail -4
echo "--- suite fp32 $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | tail -4
echo "--- main bench $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | tail -16
echo "--- cluster occupancy $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
EINC_WGMMA_CLUSTER=1 timeout 60 python3 scripts/cluster_occupancy.py $KI bfloat16 2>&1 | grep -v Warn | tail -3
echo "--- cluster tests $((SECONDS-T0))s"
timeout 150 python3 -m pytest -q -m gpu tests/test_mma.py -k "cluster" -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -30
echo "--- ncu $((SECONDS-T0))s"
for v in "0 1 0" "1 1 0" "1 0 0" "1 1 60" "1 1 64"; do
  set -- $v
  EINC_WGMMA_CLUSTER=$1 EINC_WGMMA_CLUSTER_MC=$2 EINC_WGMMA_CLUSTERS=$3 timeout 60 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,launch__grid_size python3 scripts/sk_ncu_case.py $KI bfloat16 2>&1 | grep -E "^\s+(gpu__|sm__|lts__|launch__)" | awk -v v="$v" '{print "cl,mc,cap=" v, $1, $(NF-1), $NF}'
done
timeout 60 ncu -k regex:nvjet --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,launch__grid_size python3 scripts/sk_ncu_case.py $KI bfloat16 torch 2>&1 | grep -E "^\s+(gpu__|sm__|lts__|launch__)" | awk '{print "cublas", $1, $(NF-1), $NF}'
echo "done $((SECONDS-T0))s"
