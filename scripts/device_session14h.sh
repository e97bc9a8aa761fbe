#!/usr/bin/env bash
# Session 14, call h: the wgmma epilogue's two staging forms share one store (review): the
# tensor-core GPU tests and a timing check on the staged tiles.   (bash scripts/device_session14h.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 240 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py tests/test_gpu_plan_rewrites.py tests/test_cuda_graphs.py 2>&1 | tail -2
echo "== bench ($((SECONDS-T0))s)"
timeout 120 python3 scripts/case_bench.py bfloat16 "ij,jk->ik:i=8192,j=8192,k=8192" "lki,jl->kji:i=384,j=376,k=376,l=384" "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" "amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" 2>&1 | cut -c1-130
echo "done $((SECONDS-T0))s"
