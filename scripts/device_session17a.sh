#!/usr/bin/env bash
# Session 17, call a: does writing an interleaved output in GEMM order pay? (scripts/layout_ab.py)
set -u
source scripts/device_env.sh
T0=$SECONDS
CT="a=24,b=20,c=20,i=24,j=20,k=20,m=24"
CASES="amji,cbkm->kjicba:$CT bmji,cakm->kjicba:$CT cmji,bakm->kjicba:$CT bmki,cajm->kjicba:$CT lki,jl->kji:i=384,j=376,k=376,l=384 lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96 njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96"
for dt in bfloat16 float32; do
  echo "== $dt ($((SECONDS-T0))s)"
  timeout 200 python3 scripts/layout_ab.py $dt $CASES
done
echo "done $((SECONDS-T0))s"
