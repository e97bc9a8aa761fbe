#!/usr/bin/env bash
# Session 20, call e: the DM tiles on the GPU -- their tests (poisoned outputs, every layout
# branch), memcheck and racecheck on a ragged GEMM, the tuner's GPU tests, and `einc tune` on
# TCCG ccsd kli,lj->kji (fp32), where 64x128x8d measured fastest.  (bash scripts/device_session20e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 240 python3 -m pytest -q -m gpu tests/test_gett_dm.py tests/test_cost_tune.py 2>&1 | tail -4
echo "== sanitizers ($((SECONDS-T0))s)"
for tool in memcheck racecheck; do
  EINC_GETT_BIG_TILE=128x128x8d timeout 120 compute-sanitizer --tool $tool python3 scripts/one_einsum.py 'ij,jk->ik:i=1700,j=100,k=1500' 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3
  EINC_GETT_BIG_TILE=64x128x8d timeout 120 compute-sanitizer --tool $tool python3 scripts/one_einsum.py 'ik,kj->ij:i=1700,j=1500,k=100' 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3
done
echo "== tune ($((SECONDS-T0))s)"
timeout 200 python3 -m einc tune "kli,lj->kji" --shapes 376x376x384,376x384 --dtype float32 2>&1 | tail -14
timeout 60 python3 scripts/case_bench.py float32 'kli,lj->kji:i=384,j=384,k=376,l=376' 2>&1 | tail -2
echo "done $((SECONDS-T0))s"
