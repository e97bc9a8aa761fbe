#!/usr/bin/env bash
# Session 27, call b: host time of a cached call, hot torch path against the general one;
# the hot path's GPU tests; wall time per call at 1 / 2 / 10 calls a sample.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python3 -m pytest -q -x -m gpu tests/test_streams.py -p no:cacheprovider 2>&1 | tail -3
echo "--- parts $((SECONDS-T0))s"
AQ='ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84'
timeout 100 python3 scripts/cuda_call_parts.py float32 'ij,jk->ik:i=8,j=8,k=8' bfloat16 $AQ bfloat16 'lki,jl->kji:i=384,j=376,k=376,l=384' 2>&1 | grep -v Warn
echo "--- wall $((SECONDS-T0))s"
timeout 100 python3 scripts/wall_inner.py bfloat16 $AQ 'lki,jl->kji:i=384,j=376,k=376,l=384' 2>&1 | grep -v Warn
echo "done $((SECONDS-T0))s"
