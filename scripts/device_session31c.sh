#!/usr/bin/env bash
# Session 31, call c: the DM tile rule (128x64x16d where A alone is M-fast) -- the DM and
# tuner GPU tests, an interleaved A/B of the rule's two tiles on the steps it moves (and a
# plain GEMM of the same layout), the skinny_mma slice depth (32 or 64 k) on the bf16
# intensli cases, then the fp32 TCCG-24 suite with 15 samples a case.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_gett_dm.py tests/test_cost_tune.py 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -12
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=8 timeout 200 python3 scripts/ab_modes.py einc.codegen.cuda.emit.DM_A_MFAST 128x64x16d,64x128x16d float32 \
  'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 'njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84' \
  'ji,kj->ik:i=4096,j=4096,k=4096' 2>&1 | grep -v Warn
echo "--- skinny_mma BK $((SECONDS-T0))s"
ROUNDS=6 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.BK 32,64 bfloat16 \
  'akb,jk->jba:a=384,b=384,j=24,k=384' 'abk,kj->bja:a=384,b=376,j=24,k=384' 'akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96' \
  'abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84' 'cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96' 'cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36' \
  'akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48' 'dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36' 2>&1 | grep -v Warn
echo "--- suite $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
timeout 200 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --repeat 15 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.03 {print "near/below 1x:", $4, $9}'
echo "done $((SECONDS-T0))s"
