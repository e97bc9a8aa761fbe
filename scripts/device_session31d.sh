#!/usr/bin/env bash
# Session 31, call d: skinny_mma's box for an A-heavy order-1 step (BX 32 where N <= K / 8:
# intensli akb) -- its GPU tests, an interleaved A/B against the old 16 (and 64), then the
# bf16 TCCG-24 suite with 15 samples a case.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_skinny_mma.py 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -8
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=8 timeout 60 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.BX 0,16,64 bfloat16 \
  'akb,jk->jba:a=384,b=384,j=24,k=384' 'akb,jk->jba:a=192,b=768,j=16,k=384' 2>&1 | grep -v Warn
echo -n "racecheck: "; timeout 40 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/sk_ncu_case.py 'akb,jk->jba:a=40,b=72,j=12,k=200' bfloat16 2>&1 | tail -1
echo "--- suite $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
timeout 120 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --repeat 15 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.03 {print "near/below 1x:", $4, $9}'
echo "done $((SECONDS-T0))s"
