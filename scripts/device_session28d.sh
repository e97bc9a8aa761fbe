#!/usr/bin/env bash
# Session 28, call d (closing): GPU tests of the wgmma paths with clusters on
# (EINC_WGMMA_CLUSTER=a), the cluster modes against the plain tile interleaved in one process
# (scripts/ab_modes.py), TCCG-24 bf16 with clusters off and on, fp32, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
EINC_WGMMA_CLUSTER=a timeout 170 python3 -m pytest -q -m gpu tests/test_mma.py tests/test_wgmma_streamk.py tests/test_streams.py tests/test_cuda_graphs.py tests/test_copy_tma.py -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -20
echo "--- A/B $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
NJM='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84'
LN='lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96'
ROUNDS=8 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b bfloat16 $KI $NJK $NJM $LN 2>&1 | grep -v Warn
ROUNDS=6 timeout 60 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a float16 $KI 2>&1 | grep -v Warn
# (at most 8 files come back: the plain tile's bf16 run keeps only its table)
for v in a 0; do
  echo "--- suite bf16 cluster=$v $((SECONDS-T0))s"
  d=$EINC_RESULTS_DIR; [ $v = 0 ] && d=/tmp/r0 && mkdir -p $d
  EINC_RESULTS_DIR=$d EINC_WGMMA_CLUSTER=$v timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 $([ $v = a ] && echo --plot) 2>&1 | grep -v Warn | grep -E "geometric|saved"
  f=$(ls -t $d/tccg24-cuda-bf16-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
  [ $v = 0 ] && cp $f $EINC_RESULTS_DIR/
done
echo "--- suite fp32 $((SECONDS-T0))s"
timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-fp32-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
echo "--- main bench $((SECONDS-T0))s"
EINC_WGMMA_CLUSTER=a timeout 120 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "done $((SECONDS-T0))s"
