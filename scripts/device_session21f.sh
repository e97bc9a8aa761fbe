#!/usr/bin/env bash
# Session 21, call f: the DM default -- GPU tests (DM tiles, the CUDA backend, the tuner),
# compute-sanitizer memcheck / racecheck / synccheck / initcheck on ragged, K-fast, M/N-fast,
# tabled and partial-slice layouts.  (bash scripts/device_session21f.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 330 python3 -m pytest -q -m gpu tests/test_gett_dm.py tests/test_cuda_backend.py tests/test_cost_tune.py tests/test_gpu_plan_rewrites.py 2>&1 | tail -4
echo "== sanitizers ($((SECONDS-T0))s)"
for tool in memcheck racecheck synccheck initcheck; do
  echo "-- $tool"
  timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py 'ij,jk->ik:i=1700,j=300,k=1500' 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Uninit|hazard" | head -3
  EINC_GETT_BIG_TILE=128x64x16d timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py 'ji,jk->ik:i=1500,j=203,k=1400' 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Uninit|hazard" | head -3
done
EINC_GETT_BIG_TILE=128x128x16d timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py 'kaxb,kxcd->abcd:k=37,a=30,x=6,b=13,c=40,d=21' 2>&1 | grep -E "ERROR SUMMARY|Invalid" | head -3
echo "done $((SECONDS-T0))s"
