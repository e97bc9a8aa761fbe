#!/usr/bin/env bash
# (EINC_SMALLMN_SPAN / the spread-slices kernel existed in the tree of this call only: reverted, see benchmarks/NOTES.md.)
# Session 12, call e: smallmn spreads the flat (batch x slices) run evenly over its resident
# blocks (132 partial tiles at 72^5 instead of 243 in two waves); A/B against
# EINC_SMALLMN_SPAN=0, alternated; ncu on both kernels; main bench; sanitizers.
#   (bash scripts/device_session12e.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
timeout 150 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_smallmn.py tests/test_cuda_backend.py tests/test_gpu_hardening.py tests/test_cost_tune.py 2>&1 | tail -2
echo "== tests $((SECONDS-T0))s"
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
CASES="$T72 abcd,dbea->ec:a=70,b=70,c=70,d=70,e=70 abcd,dbea->ec:a=64,b=64,c=128,d=64,e=64"
v() { echo "== $*"; env "$@" timeout 80 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -n +2 | cut -c1-110; }
v EINC_X=0; v EINC_SMALLMN_SPAN=0; v EINC_X=0; v EINC_SMALLMN_SPAN=0; v EINC_X=0
echo "== benches $((SECONDS-T0))s"
timeout 200 python3 -m einc bench --backend cuda > /tmp/main.txt 2>&1
echo "== main bench rc=$?"; tail -6 /tmp/main.txt | cut -c1-130
M=gpu__time_duration.sum,launch__grid_size,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active
for s in 1 0; do echo "== ncu 72^5 SPAN=$s"; EINC_SMALLMN_SPAN=$s timeout 60 ncu --clock-control none -k regex:einc --launch-skip 2 --launch-count 2 --metrics $M \
  python3 scripts/one_einsum.py "$T72" float32 2>&1 | grep -E "einc_|duration|grid|pct" | sed 's/  */ /g' | cut -c1-110; done
echo "== memcheck 72^5 / sanitize cases / racecheck"
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "$T72" float32 2>&1 | tail -1
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/smallmn_sanitize_cases.py 2>&1 | tail -2
timeout 120 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/smallmn_sanitize_cases.py 2>&1 | tail -2
echo "done $((SECONDS-T0))s"
