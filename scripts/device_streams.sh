#!/usr/bin/env bash
# Device call for issue 7's streams (and the open GPU checks): stream tests, CUDA backend,
# torch and JAX GPU tests, einc.torch overhead, the skinny default under tests + memcheck.
# Usage (device, repo root): bash scripts/device_streams.sh
set -u
source scripts/device_env.sh
python3 -c "import jax, jaxlib; print('jax', jax.__version__, jax.devices())" 2>&1 | tail -1
echo "== stream + backend + torch gpu tests"
timeout 200 python3 -m pytest -q -rf -m gpu -p no:cacheprovider tests/test_streams.py tests/test_cuda_backend.py \
  tests/test_torch_integration.py tests/test_skinny.py 2>&1 | tail -8
echo "== jax gpu tests"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 150 python3 -m pytest -q -rf -p no:cacheprovider \
  tests/test_jax_integration.py -W error::RuntimeWarning 2>&1 | tail -5
echo "== overhead"; timeout 40 python3 scripts/torch_overhead.py 8
for tool in memcheck racecheck; do
  echo "== $tool (every family, skinny with the KU=8 default)"
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/cuda_sanitize_cases.py 2>&1 | tail -2
done
