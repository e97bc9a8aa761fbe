# Sourced by the scripts/device_*.sh runs on the GPU machine: lark (and the other carried
# wheels in .whl/) onto the path, the repo importable, a private kernel cache, results to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD EINC_CACHE_DIR=/tmp/einc-cache PYTHONUNBUFFERED=1
export EINC_RESULTS_DIR=${OUT:-/tmp}/results
