#!/usr/bin/env bash
# Session 28, call d (closing, short: device time was scarce): the cluster GPU tests, the cluster
# modes against the plain tile interleaved in one process (scripts/ab_modes.py), TCCG-24 bf16
# with clusters ("a") and fp32, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
echo "--- A/B $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
ROUNDS=6 timeout 80 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b bfloat16 $KI $NJK 2>&1 | grep -v Warn
ROUNDS=4 timeout 40 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a float16 $KI 2>&1 | grep -v Warn
echo "--- suite bf16 cluster=a $((SECONDS-T0))s"
EINC_WGMMA_CLUSTER=a timeout 60 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-bf16-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
echo "--- suite fp32 $((SECONDS-T0))s"
timeout 60 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-fp32-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
echo "--- main bench $((SECONDS-T0))s"
EINC_WGMMA_CLUSTER=a timeout 60 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "--- tests $((SECONDS-T0))s"
timeout 60 python3 -m pytest -q -m gpu tests/test_mma.py -k "cluster" -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -8
echo "done $((SECONDS-T0))s"
