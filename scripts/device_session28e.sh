#!/usr/bin/env bash
# Session 28, call e (the last device minutes): the cluster modes against the plain tile
# interleaved in one process, then TCCG-24 bf16 (clusters "a", the default now) and fp32.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
ROUNDS=5 timeout 60 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a bfloat16 $KI $NJK 2>&1 | grep -v Warn
echo "--- suite bf16 $((SECONDS-T0))s"
timeout 50 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-bf16-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
echo "--- suite fp32 $((SECONDS-T0))s"
timeout 45 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-fp32-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
echo "done $((SECONDS-T0))s"
