#!/usr/bin/env bash
# Session 29, call c (the one that ran): the wgmma GPU tests with
# clusters on by default, the cluster pairings against the plain tile interleaved in one
# process, both TCCG-24 suites and the main bench with interleaved samples. Ordered by worth:
# whatever a cut-off call leaves under $OUT still comes back.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
timeout 150 python3 -m pytest -q -m gpu tests/test_mma.py tests/test_wgmma_streamk.py tests/test_streams.py tests/test_cuda_graphs.py tests/test_copy_tma.py -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -20
echo "--- A/B $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
NJK='njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96'
ROUNDS=6 timeout 100 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.CLUSTER 0,a,b bfloat16 $KI $NJK 2>&1 | grep -v Warn
bash scripts/device_suite.sh bfloat16
bash scripts/device_suite.sh float32
echo "--- main bench $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "done $((SECONDS-T0))s"
