#!/usr/bin/env bash
# Session 6, call 2 (einc issue 4): the SIMT gett's M/N-fast runs as one cp.async
# (EINC_GETT_MNVEC, default on) against 4-byte copies, and lane pairs against paired
# warp tiles, beside torch.einsum; the vector-run cases against numpy (plain, racecheck,
# memcheck, misaligned views); the CUDA backend's GPU tests; ncu on the 4096^3 GEMM.
# (bash scripts/device_session6b.sh)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
T0=$SECONDS
CASES="ij,jk->ik:i=4096,j=4096,k=4096 ij,jk->ik:i=8192,j=8192,k=8192 ki,jk->ji:i=7248,j=7240,k=7248
lki,kjl->ji:i=384,j=376,k=376,l=384 lik,jkl->ji:i=384,j=376,k=384,l=384 lki,jl->kji:i=384,j=376,k=376,l=384
njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84 lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96
ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
bq,srqa->srba:a=96,b=84,q=96,r=84,s=84 kli,lj->kji:i=384,j=384,k=376,l=376"
bench() {  # label, env...
  local label=$1; shift
  env "$@" timeout 90 python3 scripts/case_bench.py float32 $CASES > "$OUT/bench-$label.txt" 2>&1
  echo "== $label rc=$? ($((SECONDS-T0))s)"
  awk 'NR > 1 {printf "%-18s %8s %8s %7s %6s %s %s\n", substr($1,1,18), $3, $4, $5, $7, $8, $9}' "$OUT/bench-$label.txt"
}
bench mnvec
bench mnvec-off EINC_GETT_MNVEC=0
bench warp-pairs EINC_GETT_LANES=warp-pairs
echo "== vector-run cases ($((SECONDS-T0))s)"
timeout 60 python3 scripts/gett_kvec_cases.py --torch 2>&1 | tail -3
for tool in racecheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/gett_kvec_cases.py > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? ($((SECONDS-T0))s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|einsums' "$OUT/$tool.txt" | tr '\n' ' ' | cut -c1-150)"
done
echo "== GPU tests: CUDA backend, plan rewrites, complex ($((SECONDS-T0))s)"
timeout 150 python3 -m pytest -q -m gpu -n 8 -p no:cacheprovider tests/test_cuda_backend.py tests/test_gpu_plan_rewrites.py \
  tests/test_gpu_complex.py > "$OUT/gpu-tests.txt" 2>&1
echo "rc=$? ($((SECONDS-T0))s)"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.txt" | cut -c1-200 | head -8; tail -1 "$OUT/gpu-tests.txt"
cat > /tmp/gemm_once.py <<'PY'
import torch, einc
a, b = torch.randn(4096, 4096, device="cuda"), torch.randn(4096, 4096, device="cuda")
for _ in range(2):
    einc.einsum("ij,jk->ik", a, b)
torch.cuda.synchronize()
PY
MET=smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
for lanes in pairs warp-pairs; do
  EINC_GETT_LANES=$lanes timeout 60 ncu --clock-control none -k regex:einc_gett -c 1 -s 1 --metrics $MET \
    python3 /tmp/gemm_once.py > "$OUT/ncu-$lanes.txt" 2>&1
  echo "== ncu lanes=$lanes rc=$? ($((SECONDS-T0))s)"
  grep -E "shared_ld|wavefronts|inst_executed.sum|pipe_fma|issue_active|gpu__time" "$OUT/ncu-$lanes.txt" | sed 's/  */ /g' | cut -c1-100
done
