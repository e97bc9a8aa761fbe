#!/usr/bin/env bash
# Session 14, call f: every GPU test file on the final tree; memcheck on the new wgmma tiles
# (ws1p: ao2mo ap,srqp; wsp: ccsd lki,jl) and on the fixed tabled store (gett, abe,aecd);
# ws1 against ws1p on a K <= 128 GEMM wide in both M and N.   (bash scripts/device_session14f.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
TEST_S=330 source scripts/device_gpu_tests.sh
echo "== memcheck ($((SECONDS-T0))s)"
for c in "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 bfloat16" "lki,jl->kji:i=384,j=376,k=376,l=384 bfloat16"; do
  timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py $c 2>&1 | tail -1
done
echo "== sweep ($((SECONDS-T0))s)"
timeout 60 python3 scripts/tile_sweep.py bfloat16 "ik,jk->ij:i=16384,j=4096,k=128" default wgmma128x128ws1p wgmma128x128ws1 wgmma128x128ws1p default 2>&1 | tail -n 6
echo "done $((SECONDS-T0))s"
