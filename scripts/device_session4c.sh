#!/usr/bin/env bash
# Session 4's last device call (short budget): the GPU tests of what changed (smallmn with the
# big-stack NVRTC compile, split reductions, streams, complex GEMM), 72^5, and Sycamore slices
# beside cotengra+torch. Everything long goes to $OUT; the summary is printed.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
timeout ${TEST_S:-70} python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_smallmn.py tests/test_streams.py \
  tests/test_gpu_plan_rewrites.py tests/test_gpu_complex.py > "$OUT/gpu-tests.txt" 2>&1
echo "tests rc=$?"; tail -3 "$OUT/gpu-tests.txt" | cut -c1-300
timeout 25 python3 scripts/case_bench.py float32 "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | tail -2 | cut -c1-200
timeout ${SYC_S:-120} python3 scripts/sycamore_bench.py --devices 0 --slices ${SLICES:-2} --json "$OUT/syc.json" \
  > "$OUT/syc.txt" 2>&1
echo "syc rc=$?"; grep -E "einc|cotengra|slices|peak" "$OUT/syc.txt" | cut -c1-200 | tail -8
