#!/usr/bin/env bash
# Session 11, closing call: every GPU test, the main bench (GEMMs against cuBLAS, reduce,
# and now 72^5 against torch.einsum), TCCG-24 bf16 and fp32 with plots, 72^5 fragments against
# FFMA in the same run, memcheck on a TMA GEMM and the 72^5 fragments kernel (host API probe
# errors of cuda-bindings' cuInit left out: call d showed the 34 "errors" are those).
# (bash scripts/device_session11e.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
source scripts/device_gpu_tests.sh
echo "== tests $((SECONDS-T0))s"
timeout 120 python3 -m einc bench --backend cuda > /tmp/bench.txt 2>&1
echo "== bench rc=$? ($((SECONDS-T0))s)"; grep -iE "gemm|cublas|int8|tf32|dot|copy|72|torch.einsum" /tmp/bench.txt | cut -c1-150 | head -24
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot > /tmp/tccg-bf16.txt 2>&1
echo "== TCCG-24 bf16 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-bf16.txt)"
grep -E "ccsd |ao2mo|ccsd_t" /tmp/tccg-bf16.txt | cut -c1-120 | head -30
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "ccsd |ao2mo|intensli" /tmp/tccg-fp32.txt | cut -c1-120 | head -30
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
CASES="$T72 abcd,dbea->ec:a=70,b=70,c=70,d=70,e=70 abcd,dbea->ec:a=75,b=75,c=75,d=75,e=75"
echo "== fragments"; timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -3
echo "== ffma"; EINC_SMALLMN_DMMA=0 timeout 70 python3 scripts/case_bench.py float32 $CASES 2>&1 | tail -3
echo "== fragments again"; timeout 40 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1
echo "== memcheck TMA GEMM"
timeout 90 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 4 python3 scripts/one_einsum.py "ij,jk->ik:i=4096,j=4096,k=4096" bfloat16 2>&1 | tail -3 | cut -c1-200
echo "== memcheck 72^5 fragments"
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 4 python3 scripts/one_einsum.py "$T72" float32 2>&1 | tail -3 | cut -c1-200
echo "done $((SECONDS-T0))s"
