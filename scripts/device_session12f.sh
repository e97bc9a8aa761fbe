#!/usr/bin/env bash
# Session 12, call f: cp.async with an L2 prefetch size (EINC_L2_PREFETCH=128/256: ".L2::128B"),
# for the fp64-fragment kernels that sit near 1.5-1.8 TB/s of 32-byte runs (72^5, abk, cabk),
# the M-fast ones, and TCCG-24 fp32 (the SIMT gett copies too); alternated in one run.
#   (bash scripts/device_session12f.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
CASES="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72 abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 akb,jk->jba:a=384,b=384,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 lki,jl->kji:i=384,j=376,k=376,l=384"
v() { echo "== $*"; env "$@" timeout 80 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -n +2 | cut -c1-110; }
v EINC_X=0; v EINC_L2_PREFETCH=128; v EINC_L2_PREFETCH=256; v EINC_X=0; v EINC_L2_PREFETCH=128; v EINC_L2_PREFETCH=256
echo "== benches $((SECONDS-T0))s"
for m in 128 0; do
EINC_L2_PREFETCH=$m timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 L2=$m rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo|intensli" /tmp/tccg-fp32.txt | cut -c1-110 | head -24
done
echo "done $((SECONDS-T0))s"
