#!/usr/bin/env bash
# Session 32, call b (what 32a's steps fit into the device time left after refused starts):
# skinny_mma's TMA slices -- its GPU tests, an interleaved A/B (TMA on / off) on five bf16
# intensli cases against torch.einsum, memcheck on a TMA kernel.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
EINC_SKINNY_MMA_TMA=1 timeout 80 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_skinny_mma.py 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -12
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=4 timeout 120 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.TMA 1,0 bfloat16 \
  'akb,jk->jba:a=384,b=384,j=24,k=384' 'abk,kj->bja:a=384,b=376,j=24,k=384' \
  'dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36' 'cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36' \
  'akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96' 2>&1 | grep -v Warn
echo -n "memcheck akbc: "; timeout 30 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/sk_ncu_case.py 'akbc,jk->cjba:a=48,b=10,c=32,j=24,k=40' bfloat16 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
