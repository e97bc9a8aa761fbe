#!/usr/bin/env bash
# Session 29, call a: session 28d's first half -- the wgmma GPU tests with clusters on by
# default, the cluster pairings against the plain tile interleaved in one process
# (scripts/ab_modes.py), then the bf16 TCCG-24 suite with interleaved samples.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
timeout 200 python3 -m pytest -q -m gpu tests/test_mma.py tests/test_wgmma_streamk.py tests/test_streams.py tests/test_cuda_graphs.py tests/test_copy_tma.py -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -20
echo "--- A/B $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
NJM='njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84'
ROUNDS=8 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b bfloat16 $KI $NJK $NJM 2>&1 | grep -v Warn
ROUNDS=6 timeout 60 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a float16 $KI 2>&1 | grep -v Warn
bash scripts/device_suite.sh bfloat16
echo "done $((SECONDS-T0))s"
