#!/usr/bin/env bash
# Sourced by the session-5 device scripts (after device_env.sh): every GPU test file but the
# stream tests (timing-sensitive) and JAX's, 8 pytest workers on the one GPU, output in
# $OUT/gpu-tests.txt and a one-line summary plus any failures printed.
GPU_TESTS="tests/test_cuda_backend.py tests/test_mma.py tests/test_gpu_complex.py tests/test_torch_integration.py
  tests/test_smallmn.py tests/test_skinny.py tests/test_skinny_mma.py tests/test_cuda_graphs.py tests/test_gpu_hardening.py
  tests/test_distributed.py tests/test_cost_tune.py tests/test_gpu_plan_rewrites.py tests/test_gett_kernel.py tests/test_stream.py
  tests/test_gett_dm.py tests/test_wgmma_streamk.py"
t0=$SECONDS
timeout ${TEST_S:-200} python3 -m pytest -q -rs -n 8 -m gpu -p no:cacheprovider $GPU_TESTS > "$OUT/gpu-tests.txt" 2>&1
echo "tests rc=$? $((SECONDS-t0))s"; grep -E "^(FAILED|ERROR|SKIPPED)" "$OUT/gpu-tests.txt" | cut -c1-220 | head -12
tail -1 "$OUT/gpu-tests.txt"
