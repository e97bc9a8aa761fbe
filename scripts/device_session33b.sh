#!/usr/bin/env bash
# Session 33, call b (cut to the device time left): the A/B (TMA on / off) on the three bf16
# intensli cases 33a's A/B left out (akdbc, abkc, cabk; the suite after 33a hinted akdbc lost
# ~16% with TMA, a cross-run comparison), then `einc bench --backend cuda --suite intensli`.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
ROUNDS=3 timeout 60 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.TMA 1,0 bfloat16 \
  'akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48' 'abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84' \
  'cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96' 2>&1 | grep -v Warn
echo "--- intensli against the copy (TMA default) $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
timeout 75 python3 -m einc bench --backend cuda --suite intensli 2>&1 | grep -v Warn | grep -E "^intensli|TB/s =|saved|WRONG"
echo "done $((SECONDS-T0))s"
