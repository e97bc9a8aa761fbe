#!/usr/bin/env bash
# Session 28, call d (written for the next device call; not run in session 28, which got no
# machine after call b): GPU tests of the wgmma paths with clusters on by default, the cluster
# modes against the plain tile interleaved in one process (scripts/ab_modes.py), both TCCG-24
# suites with the interleaved samples, the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
timeout 200 python3 -m pytest -q -m gpu tests/test_mma.py tests/test_wgmma_streamk.py tests/test_streams.py tests/test_cuda_graphs.py tests/test_copy_tma.py -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -20
echo "--- A/B $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
NJM='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84'
ROUNDS=8 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b bfloat16 $KI $NJK $NJM 2>&1 | grep -v Warn
ROUNDS=6 timeout 60 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a float16 $KI 2>&1 | grep -v Warn
for dt in bfloat16 float32; do
  echo "--- suite $dt $((SECONDS-T0))s"
  timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
  f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
done
echo "--- main bench $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "done $((SECONDS-T0))s"
