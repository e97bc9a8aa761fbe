#!/usr/bin/env bash
# Session 27, call f (closing): GPU tests of the changed paths (wgmma tiles, stream-K, the hot
# torch path, graphs), racecheck/memcheck on the 192x192wsp kernel, both TCCG-24 suites, main bench.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $EINC_RESULTS_DIR
timeout 200 python3 -m pytest -q -m gpu tests/test_mma.py tests/test_wgmma_streamk.py tests/test_streams.py tests/test_cuda_graphs.py tests/test_copy_tma.py -p no:cacheprovider 2>&1 | tail -4 | tee $EINC_RESULTS_DIR/gpu-tests-session27.txt
echo "--- suite bf16 $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot 2>&1 | grep -v Warn | tail -4
echo "--- suite fp32 $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | grep -v Warn | tail -4
echo "--- sanitize $((SECONDS-T0))s"
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_ncu_case.py 'ki,jk->ji:i=2112,j=2104,k=1152' bfloat16 2>&1 | tail -1
done
echo "--- main bench $((SECONDS-T0))s"
timeout 150 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | tail -16
echo "done $((SECONDS-T0))s"
