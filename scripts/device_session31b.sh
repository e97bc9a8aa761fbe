#!/usr/bin/env bash
# Session 31, call b: every GPU test file on today's tree, compute-sanitizer on the 64x64x16d
# DM tile (ragged, M-fast and K-fast operands), then the main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
TEST_S=300 source scripts/device_gpu_tests.sh
echo "--- sanitizer $((SECONDS-T0))s"
for S in 'lki,jl->kji:i=100,j=70,k=9,l=150' 'ik,kj->ij:i=130,j=75,k=200'; do for tool in memcheck racecheck synccheck; do
  echo -n "64x64x16d $S $tool: "; EINC_GETT_BIG_TILE=64x64x16d timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_ncu_case.py $S float32 2>&1 | tail -1
done; done
echo "--- bench $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
timeout 170 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "done $((SECONDS-T0))s"
