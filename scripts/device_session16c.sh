#!/usr/bin/env bash
# Session 16, closing call (c): memcheck of the 72^5 flat split (kernel accesses only), the GPU
# tests of the files this session touched, and the main bench.   (bash scripts/device_session16c.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
echo "== memcheck ($((SECONDS-T0))s)"
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | tail -2
echo "== gpu tests ($((SECONDS-T0))s)"
timeout 200 python3 -m pytest -q -m gpu -n 8 -p no:cacheprovider tests/test_smallmn.py tests/test_gpu_plan_rewrites.py tests/test_cuda_graphs.py tests/test_cost_tune.py tests/test_cuda_backend.py 2>&1 | tail -3
timeout 200 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$? ($((SECONDS-T0))s)"; tail -24 /tmp/main.txt | cut -c1-140
echo "done $((SECONDS-T0))s"
