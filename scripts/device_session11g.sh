#!/usr/bin/env bash
# Session 11, closing call (g): every GPU test on the final tree; the eight intensli cases with
# the M-fast ring on fp64 fragments against its FFMA rows (same run, alternated); TCCG-24 fp32;
# memcheck / racecheck on akb's fragments.   (bash scripts/device_session11g.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
source scripts/device_gpu_tests.sh
echo "== tests $((SECONDS-T0))s"
I="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
echo "== fragments"; timeout 80 python3 scripts/case_bench.py float32 $I 2>&1 | tail -8
echo "== M-fast FFMA rows"; EINC_SKINNY_DMMA_MFAST=0 timeout 80 python3 scripts/case_bench.py float32 $I 2>&1 | tail -8
echo "== fragments"; timeout 80 python3 scripts/case_bench.py float32 $I 2>&1 | tail -8
echo "== benches $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo|intensli" /tmp/tccg-fp32.txt | cut -c1-120 | head -30
echo "== memcheck / racecheck akb"
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "akb,jk->jba:a=384,b=384,j=24,k=384" float32 2>&1 | tail -1
timeout 90 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/one_einsum.py "akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48" float32 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
