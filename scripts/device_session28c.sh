#!/usr/bin/env bash
# Session 28, call c: the cluster modes of 192x192wsp against the plain tile, interleaved in one
# process per dtype (scripts/ab_modes.py), ROUNDS rounds, torch.einsum timed in every round.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
NJM='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84'
LN='lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96'
ROUNDS=8 timeout 200 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b bfloat16 $KI $NJK $NJM $LN 2>&1 | grep -v Warn
echo "--- fp16 $((SECONDS-T0))s"
ROUNDS=8 timeout 100 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b float16 $KI $NJK 2>&1 | grep -v Warn
echo "done $((SECONDS-T0))s"
