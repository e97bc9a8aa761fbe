#!/usr/bin/env bash
# Session 12, closing call (g): cp.async with ".L2::128B" by default for the SIMT families;
# the eight intensli cases and 72^5 against EINC_L2_PREFETCH=0; TCCG-24 fp32; the main bench;
# the smallmn / skinny / backend / gett GPU tests; memcheck on abk.   (bash scripts/device_session12g.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
I="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72 akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
v() { echo "== $*"; env "$@" timeout 80 python3 scripts/case_bench.py float32 $I 2>&1 | tail -n +2 | cut -c1-110; }
v EINC_X=0; v EINC_L2_PREFETCH=0; v EINC_X=0
echo "== benches $((SECONDS-T0))s"
timeout 100 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |intensli" /tmp/tccg-fp32.txt | cut -c1-110 | head -18
timeout 120 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$? ($((SECONDS-T0))s)"; tail -22 /tmp/main.txt | cut -c1-130
timeout 100 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_smallmn.py tests/test_skinny.py tests/test_cuda_backend.py tests/test_gett_kernel.py tests/test_stream.py > $OUT/gpu-tests.txt 2>&1
echo "== tests rc=$? ($((SECONDS-T0))s)"; tail -2 $OUT/gpu-tests.txt
timeout 40 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "abk,kj->bja:a=384,b=376,j=24,k=384" float32 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
