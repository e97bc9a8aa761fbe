#!/usr/bin/env bash
# Session 27, call c: where bf16 ki,jk 7248 loses to cuBLAS -- ncu counters of einc's 192x192ws
# and 128x256ws beside cuBLAS's kernel (L2 and DRAM throughput, tensor pipe, stalls); the suite
# with the hot torch path.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
C='ki,jk->ji:i=7248,j=7240,k=7248'
M=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_long_scoreboard,launch__grid_size,launch__cluster_dim_x,l1tex__t_bytes.sum
for v in 1 0; do
  echo "--- einc EINC_WGMMA_192=$v $((SECONDS-T0))s"
  EINC_WGMMA_192=$v timeout 90 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics $M python3 scripts/sk_ncu_case.py $C bfloat16 2>&1 | grep -E "^\s+(gpu__|sm__|lts__|dram__|smsp__|launch__|l1tex__)" | awk '{print $1, $(NF-1), $NF}'
done
echo "--- torch $((SECONDS-T0))s"
timeout 90 ncu -k regex:"nvjet|gemm|sm90" --launch-skip 1 --launch-count 1 --metrics $M python3 scripts/sk_ncu_case.py $C bfloat16 torch 2>&1 | grep -E "^\s+(gpu__|sm__|lts__|dram__|smsp__|launch__|l1tex__)|nvjet|gemm" | awk '{print $1, $(NF-1), $NF}' | head -20
echo "--- suite bf16 $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | tail -28
echo "done $((SECONDS-T0))s"
