#!/usr/bin/env bash
# Session 25, call a: bf16 ki,jk on the 192x192 wgmma tile against 128x256; GPU tests of the
# TMA rows copy, the GEMM-order copies, the 192x192 tile and stream_mma's boxes (the shared
# TMA store); memcheck on copy_tma.
set -u
source scripts/device_env.sh
T0=$SECONDS
KI='ki,jk->ji:i=7248,j=7240,k=7248'
for r in 1 2; do
EINC_WGMMA_192=1 timeout 60 python3 scripts/case_bench.py bfloat16 $KI 'ij,jk->ik:i=8192,j=8192,k=8192' 2>&1 | tail -2
EINC_WGMMA_192=0 timeout 60 python3 scripts/case_bench.py bfloat16 $KI 2>&1 | tail -1
done
EINC_WGMMA_192=1 timeout 40 python3 scripts/case_bench.py float16 $KI 2>&1 | tail -1
EINC_WGMMA_192=0 timeout 40 python3 scripts/case_bench.py float16 $KI 2>&1 | tail -1
echo "--- tests $((SECONDS-T0))s"
timeout 230 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_copy_tma.py tests/test_mma.py tests/test_gpu_plan_rewrites.py 2>&1 | tail -4
timeout 80 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_stream.py -k "boxes" 2>&1 | tail -2
echo "--- memcheck $((SECONDS-T0))s"
timeout 60 compute-sanitizer --tool memcheck python3 scripts/copy_tma_sanitize_case.py 2>&1 | grep -v Warn | tail -14
echo "done $((SECONDS-T0))s"
