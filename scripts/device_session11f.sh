#!/usr/bin/env bash
# Session 11, call f: skinny's K-fast fp32 steps on fp64 tensor-core fragments (abk, cabk).
# GPU skinny and smallmn tests, the eight intensli cases with fragments against FFMA rows in
# the same run (twice, alternated), TCCG-24 fp32, memcheck and racecheck on abk.
# (bash scripts/device_session11f.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_skinny.py tests/test_smallmn.py 2>&1 | tail -3
echo "== tests $((SECONDS-T0))s"
I="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
K="abk,kj->bja:a=384,b=376,j=24,k=384 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96"
echo "== fragments"; timeout 80 python3 scripts/case_bench.py float32 $I 2>&1 | tail -8
echo "== ffma"; EINC_SKINNY_DMMA=0 timeout 60 python3 scripts/case_bench.py float32 $K 2>&1 | tail -2
echo "== fragments"; timeout 60 python3 scripts/case_bench.py float32 $K 2>&1 | tail -2
echo "== ffma"; EINC_SKINNY_DMMA=0 timeout 60 python3 scripts/case_bench.py float32 $K 2>&1 | tail -2
echo "== fragments, 3 stages"; EINC_SKINNY_S=3 timeout 60 python3 scripts/case_bench.py float32 $K 2>&1 | tail -2
echo "== benches $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo|intensli" /tmp/tccg-fp32.txt | cut -c1-120 | head -30
echo "== memcheck / racecheck abk"
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "abk,kj->bja:a=384,b=376,j=24,k=384" float32 2>&1 | tail -1
timeout 90 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/one_einsum.py "cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96" float32 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
