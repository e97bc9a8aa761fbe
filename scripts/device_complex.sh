#!/usr/bin/env bash
# Brief A's device call: the complex-GEMM GPU tests, then the Sycamore slices (einc against
# cotengra+torch on the same sliced tree) and slice 0 step by step (einc against torch.einsum).
# Usage (device, repo root): bash scripts/device_complex.sh
# Prepare: rm -rf build/cleanA; mkdir -p build/cleanA; git archive HEAD einc tests scripts
# benchmarks/sycamore_n53_m14.json pyproject.toml | tar -x -C build/cleanA; then carry build/cleanA.
# Knobs: SLICES (default 4), MEMLIMIT (default 34.36GB: 512 slices; 64GiB: the file's 256-slice tree),
# TEST_S / SYC_S (timeouts in seconds).
set -u
source scripts/device_env.sh
# build/cleanA (carried): `git archive HEAD` of einc, tests, scripts -- the committed tree,
# without what others have in flight in the shared checkout
if [ -d build/cleanA ]; then cd build/cleanA && export PYTHONPATH=/tmp/site:$PWD; fi
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader
echo "== gpu tests (tests/test_gpu_complex.py)"
timeout "${TEST_S:-120}" python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_complex.py -rs 2>&1 \
  | tee "$OUT/gpu-complex-tests.txt" | tail -15
echo "== sycamore, ${SLICES:-4} slices"
timeout "${SYC_S:-230}" python3 scripts/sycamore_bench.py --devices 0 --slices "${SLICES:-4}" --profile \
  --memory-limit "${MEMLIMIT:-34.36GB}" \
  --json "$OUT/syc.json" 2>&1 | grep -v "Warning\|warn(" | cut -c1-600 | tail -45
echo "rc=$?"
