#!/usr/bin/env bash
# Session 29, call d: is bf16 ki,jk's gap to cuBLAS a per-tile cost or the main loop's rate?
# ncu times of einc (clusters a, and off) and cuBLAS at K = 7248 and 14496 (same M, N): with
# time = waves x (per-tile cost + K x rate), two K values separate the two.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
M=gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum
for k in 7248 14496; do
  C="ki,jk->ji:i=7248,j=7240,k=$k"
  for cl in a 0; do
    EINC_WGMMA_CLUSTER=$cl timeout 60 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics $M python3 scripts/sk_ncu_case.py $C bfloat16 2>&1 | grep -E "^\s+(gpu__|sm__|lts__)" | awk -v v="einc cl=$cl k=$k" '{print v, $1, $(NF-1), $NF}'
  done
  timeout 60 ncu -k regex:nvjet --launch-skip 1 --launch-count 1 --metrics $M python3 scripts/sk_ncu_case.py $C bfloat16 torch 2>&1 | grep -E "^\s+(gpu__|sm__|lts__)" | awk -v v="cublas k=$k" '{print v, $1, $(NF-1), $NF}'
done
echo "done $((SECONDS-T0))s"
