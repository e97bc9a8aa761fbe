#!/usr/bin/env bash
# Session 20, call f: memcheck / initcheck on the DM tiles without the driver-API probes
# (20e's 34 "errors" in both runs), one error line shown if any; `einc tune` on ccsd lki,jl.
#   (bash scripts/device_session20f.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
for tool in memcheck initcheck; do
  EINC_GETT_BIG_TILE=128x128x8d timeout 120 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py 'ij,jk->ik:i=1700,j=100,k=1500' 2>&1 | grep -E "ERROR SUMMARY|Invalid|Uninit" | head -3
  EINC_GETT_BIG_TILE=64x128x8d timeout 120 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/one_einsum.py 'ik,kj->ij:i=1700,j=1500,k=100' 2>&1 | grep -E "ERROR SUMMARY|Invalid|Uninit" | head -3
done
EINC_GETT_BIG_TILE=128x64x8d timeout 120 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py 'kaxb,kxcd->abcd:k=37,a=30,x=6,b=13,c=40,d=21' 2>&1 | grep -E "ERROR SUMMARY|Invalid" | head -3
echo "== tune ($((SECONDS-T0))s)"
timeout 150 python3 -m einc tune "lki,jl->kji" --shapes 384x376x384,376x384 --dtype float32 2>&1 | tail -12
echo "done $((SECONDS-T0))s"
