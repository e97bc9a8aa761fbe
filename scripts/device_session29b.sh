#!/usr/bin/env bash
# Session 29, call b: session 28d's second half -- the fp32 TCCG-24 suite and the main bench,
# both with interleaved samples.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
bash scripts/device_suite.sh float32
echo "--- main bench $((SECONDS-T0))s"
timeout 200 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "done $((SECONDS-T0))s"
