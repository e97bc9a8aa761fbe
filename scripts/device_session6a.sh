#!/usr/bin/env bash
# Session 6, call 1 (einc issue 4): the SIMT gett kernel's lane orders (EINC_GETT_LANES =
# rows / pairs / warps) timed beside torch.einsum on the GEMM-like TCCG cases; ncu on the
# 4096^3 GEMM per order (shared-memory wavefronts per LDS, stalls, issue, FMA pipe); the
# main bench (fresh tensor-core figures). Long output under $OUT, short tables on stdout.
# (bash scripts/device_session6a.sh)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
T0=$SECONDS
CASES="ij,jk->ik:i=4096,j=4096,k=4096 ij,jk->ik:i=8192,j=8192,k=8192 ki,jk->ji:i=7248,j=7240,k=7248
lki,kjl->ji:i=384,j=376,k=376,l=384 lik,jkl->ji:i=384,j=376,k=384,l=384 lki,jl->kji:i=384,j=376,k=376,l=384
njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84 lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96
ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
for lanes in rows warps pairs; do
  EINC_GETT_LANES=$lanes timeout 90 python3 scripts/case_bench.py float32 $CASES > "$OUT/bench-$lanes.txt" 2>&1
  echo "== lanes=$lanes rc=$? ($((SECONDS-T0))s)"
  awk 'NR > 1 {printf "%-18s %8s %8s %7s %6s %s %s\n", substr($1,1,18), $3, $4, $5, $7, $8, $9}' "$OUT/bench-$lanes.txt"
done
cat > /tmp/gemm_once.py <<'PY'
import torch, einc
a, b = torch.randn(4096, 4096, device="cuda"), torch.randn(4096, 4096, device="cuda")
for _ in range(2):
    einc.einsum("ij,jk->ik", a, b)
torch.cuda.synchronize()
PY
MET=smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
for lanes in rows warps; do
  EINC_GETT_LANES=$lanes timeout 60 ncu --clock-control none -k regex:einc_gett -c 1 -s 1 --section WarpStateStats --metrics $MET \
    python3 /tmp/gemm_once.py > "$OUT/ncu-$lanes.txt" 2>&1
  echo "== ncu lanes=$lanes rc=$? ($((SECONDS-T0))s)"
  grep -E "smsp__inst_executed_op_shared_ld|wavefronts_mem_shared_op_ld|bank_conflicts|smsp__inst_executed.sum|pipe_fma|issue_active|cycles_elapsed|gpu__time|Stall|Warp Cycles Per|Issued Warp" "$OUT/ncu-$lanes.txt" | sed 's/  */ /g' | cut -c1-110
done
echo "== main bench ($((SECONDS-T0))s)"
timeout 200 python3 -m einc bench --backend cuda > "$OUT/main-bench.txt" 2>&1
echo "rc=$? ($((SECONDS-T0))s)"; grep -vE '^\s*$' "$OUT/main-bench.txt" | cut -c1-150 | tail -25
