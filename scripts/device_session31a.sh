#!/usr/bin/env bash
# Session 31, call a: the 64x64x16d DM tile (2 warps, 4 blocks an SM) -- its GPU tests,
# an interleaved A/B of the DM tiles on fp32 lki,jl (K = 384) and three other fp32 GEMM
# shapes, then both TCCG-24 suites on today's tree with 15 samples a case.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_gett_dm.py 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -12
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=8 timeout 200 python3 scripts/ab_modes.py einc.codegen.cuda.emit.DM_DEFAULT 64x128x16d,64x64x16d,128x64x16d float32 \
  'lki,jl->kji:i=384,j=376,k=376,l=384' 'kli,lj->kji:i=384,j=384,k=376,l=376' \
  'ki,jk->ji:i=4096,j=4096,k=4096' 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 2>&1 | grep -v Warn
echo "--- suites $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
for dt in float32 bfloat16; do
  timeout 200 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --repeat 15 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
  f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.03 {print "near/below 1x:", $4, $9}'
done
echo "done $((SECONDS-T0))s"
