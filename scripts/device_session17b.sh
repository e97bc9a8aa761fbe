#!/usr/bin/env bash
# Session 17, call b: ccsd_t bf16 with the stream kernel reading amji in place (no transpose
# step; EINC_STREAM_COPY=0) against the default; einc tune on the fp32 split-K ccsd cases;
# wgmma tile sweeps of the below-1x bf16 GEMM steps.   (bash scripts/device_session17b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
CT="a=24,b=20,c=20,i=24,j=20,k=20,m=24"
CASES="amji,cbkm->kjicba:$CT bmji,cakm->kjicba:$CT cmji,bakm->kjicba:$CT bmki,cajm->kjicba:$CT"
for c in 1 0 1 0; do
  echo "== ccsd_t bf16 EINC_STREAM_COPY=$c ($((SECONDS-T0))s)"
  EINC_STREAM_COPY=$c timeout 60 python3 scripts/case_bench.py bfloat16 $CASES
done
echo "== tune fp32 ($((SECONDS-T0))s)"
timeout 90 python3 -m einc tune "lki,kjl->ji" --shapes 384x376x384,376x376x384 --dtype float32 --repeat 5 2>&1 | tail -25
timeout 90 python3 -m einc tune "lik,jkl->ji" --shapes 384x384x384,376x384x384 --dtype float32 --repeat 5 2>&1 | tail -25
rm -rf /tmp/einc-cache/tuned* 2>/dev/null
echo "== sweeps bf16 ($((SECONDS-T0))s)"
timeout 70 python3 scripts/tile_sweep.py bfloat16 "ki,jk->ji:i=7248,j=7240,k=7248" default wgmma128x256ws wgmma256x128ws wgmma128x256wsp
timeout 70 python3 scripts/tile_sweep.py bfloat16 "lki,jl->kji:i=384,j=376,k=376,l=384" default wgmma128x256ws wgmma256x128ws wgmma128x128ws1p wgmma128x128s3
timeout 70 python3 scripts/tile_sweep.py bfloat16 "ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84" default wgmma128x128ws1 wgmma128x256wsp wgmma128x128s3 wgmma128x128
echo "done $((SECONDS-T0))s"
