#!/usr/bin/env bash
# Session 27, call e: the 192x192wsp tile on the ccsd GEMM-order steps it narrowly misses
# (njmi,kmln: waves x area 0.963 of 256x128ws; njmi,mknl 0.985 of 128x256ws) --
# EINC_WGMMA_192_SHARE=1.0 against the default 0.96, alternated twice.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
NJ='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
NM='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84'
for r in 1 2; do
  for v in 1.0 0.96; do
    echo "share=$v"
    EINC_WGMMA_192_SHARE=$v timeout 100 python3 scripts/case_bench.py bfloat16 $NJ $NM 2>&1 | grep -v Warn | tail -2
  done
done
EINC_WGMMA_192_SHARE=1.0 timeout 100 python3 scripts/case_bench.py float16 $NJ $NM 2>&1 | grep -v Warn | tail -2
timeout 100 python3 scripts/case_bench.py float16 $NJ $NM 2>&1 | grep -v Warn | tail -2
echo "done $((SECONDS-T0))s"
