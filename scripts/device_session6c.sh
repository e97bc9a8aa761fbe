#!/usr/bin/env bash
# Session 6, call 3 (einc issue 4): the SIMT gett's 16-k slice tile (EINC_GETT_BIG_TILE=
# 128x128x16: 2 stages, K-fast runs in two register parts) against 128x128x8, beside
# torch.einsum; its vector-run cases against numpy (plain and under racecheck).
# (bash scripts/device_session6c.sh)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
T0=$SECONDS
CASES="ij,jk->ik:i=4096,j=4096,k=4096 ij,jk->ik:i=8192,j=8192,k=8192 ki,jk->ji:i=7248,j=7240,k=7248
lki,kjl->ji:i=384,j=376,k=376,l=384 lki,jl->kji:i=384,j=376,k=376,l=384
njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84 lnim,kmjn->lkji:i=96,j=84,k=84,l=84,m=96,n=96
amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bq,srqa->srba:a=96,b=84,q=96,r=84,s=84
kli,lj->kji:i=384,j=384,k=376,l=376"
bench() {  # label, env...
  local label=$1; shift
  env "$@" timeout 90 python3 scripts/case_bench.py float32 $CASES > "$OUT/bench-$label.txt" 2>&1
  echo "== $label rc=$? ($((SECONDS-T0))s)"
  awk 'NR > 1 {printf "%-18s %8s %8s %7s %6s %s %s\n", substr($1,1,18), $3, $4, $5, $7, $8, $9}' "$OUT/bench-$label.txt"
}
bench bk8
bench bk16 EINC_GETT_BIG_TILE=128x128x16
export EINC_GETT_BIG_TILE=128x128x16
echo "== vector-run cases, 16-k tile ($((SECONDS-T0))s)"
timeout 60 python3 scripts/gett_kvec_cases.py --torch 2>&1 | tail -2
for tool in racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/gett_kvec_cases.py > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? ($((SECONDS-T0))s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|einsums' "$OUT/$tool.txt" | tr '\n' ' ' | cut -c1-150)"
done
