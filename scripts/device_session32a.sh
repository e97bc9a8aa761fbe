#!/usr/bin/env bash
# Session 32, call a: skinny_mma's A slices by the TMA unit (emit_skinny_mma.TMA) -- its GPU
# tests, an interleaved A/B (TMA on / off) on the eight bf16 TCCG intensli cases against
# torch.einsum, the bf16 suite where TMA won, sanitizers on TMA kernels.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 90 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_skinny_mma.py 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -12
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=4 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.TMA 1,0 bfloat16 \
  'akb,jk->jba:a=384,b=384,j=24,k=384' 'abk,kj->bja:a=384,b=376,j=24,k=384' \
  'akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96' 'abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84' \
  'cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96' 'cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36' \
  'akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48' 'dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36' 2>&1 | grep -v Warn | tee /tmp/ab.txt
# geometric mean of the TMA=1 / TMA=0 time ratios; the bf16 suite runs (TMA on, the default) if it is < 1
GAIN=$(awk '/TMA=1 /{a=$2} /TMA=0 /{s+=log(a/$2); n++} END{printf "%.4f", exp(s/n)}' /tmp/ab.txt)
echo "TMA on / off, geometric mean of times: $GAIN"
if awk "BEGIN{exit !($GAIN < 0.99)}"; then
  echo "--- suite $((SECONDS-T0))s"
  mkdir -p $EINC_RESULTS_DIR
  timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --repeat 15 --plot 2>&1 | grep -v Warn | grep -E "intensli|geometric|saved"
fi
echo "--- sanitizers $((SECONDS-T0))s"
echo -n "memcheck akbc: "; timeout 30 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/sk_ncu_case.py 'akbc,jk->cjba:a=48,b=10,c=32,j=24,k=40' bfloat16 2>&1 | tail -1
echo -n "racecheck abk: "; timeout 30 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/sk_ncu_case.py 'abk,kj->bja:a=200,b=37,j=24,k=40' bfloat16 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
