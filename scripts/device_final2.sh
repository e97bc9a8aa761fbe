#!/usr/bin/env bash
# Closing device call, part 2: torch and Dask GPU tests, einc.torch overhead, the skinny
# experiment switches A/B, sysinfo, a two-slice Sycamore run. (bash scripts/device_final2.sh)
set -u
source scripts/device_env.sh
timeout 20 python3 -m einc sysinfo 2>&1 | head -12
echo "== gpu tests"
timeout 150 python3 -m pytest -q -rf -m gpu -p no:cacheprovider tests/test_torch_integration.py tests/test_distributed.py 2>&1 | tail -6
echo "== overhead"; timeout 40 python3 scripts/torch_overhead.py 8
I="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48"
echo "== skinny default"; timeout 60 python3 scripts/case_bench.py float32 $I 2>&1 | tail -5
echo "== KU=8 KFAST_RM=2"; EINC_SKINNY_KU=8 EINC_SKINNY_KFAST_RM=2 timeout 60 python3 scripts/case_bench.py float32 $I 2>&1 | tail -5
echo "== sycamore"; timeout 70 python3 scripts/sycamore_bench.py --devices 0 --slices 2 --json ${OUT:-/tmp}/syc1.json 2>&1 | tail -8
