#!/usr/bin/env bash
# Session 5's last device call, in order of what matters if it runs out of time: every GPU
# test at HEAD; compute-sanitizer (racecheck, memcheck) on the new kernels -- permute, the
# aligned sum, skinny's N-fast rows, gett's K-fast vector runs; gett's vector runs against
# the old element loads on TCCG cases (EINC_GETT_KVEC=0/1, same run); the smallmn switches
# on 72^5; TCCG-24 fp32 with whatever time is left. Long output -> $OUT.
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
END=${END_S:-560}  # seconds this script may take in all
source scripts/device_gpu_tests.sh
for tool in racecheck memcheck; do
  EINC_SANITIZE_ONLY=new timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/cuda_sanitize_cases.py \
    > "$OUT/sanitize-$tool.txt" 2>&1
  echo "$tool new kernels rc=$? $(grep -E 'einsums|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.txt" | tr '\n' ' ' | cut -c1-150)"
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/gett_kvec_cases.py > "$OUT/kvec-$tool.txt" 2>&1
  echo "$tool gett k-fast rc=$? $(grep -E 'einsums|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/kvec-$tool.txt" | tr '\n' ' ' | cut -c1-150)"
done
timeout 40 python3 scripts/gett_kvec_cases.py --torch 2>&1 | tail -2
CASES="lik,jkl->ji:i=384,j=376,k=384,l=384 ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84
amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 ij,jk->ik:i=4096,j=4096,k=4096
ki,jk->ji:i=7248,j=7240,k=7248 lki,kjl->ji:i=384,j=376,k=376,l=384 bq,srqa->srba:a=96,b=84,q=96,r=84,s=84"
for kv in 1 0; do
  EINC_GETT_KVEC=$kv timeout 60 python3 scripts/case_bench.py float32 $CASES > "$OUT/gett-kvec$kv.txt" 2>&1
  echo "== gett EINC_GETT_KVEC=$kv rc=$? ($SECONDS s)"
  awk 'NR > 1 {printf "%-18s %8s %8s %7s %7s %6s %s\n", substr($1,1,18), $3, $4, $5, $6, $7, $8}' "$OUT/gett-kvec$kv.txt" | head -8
done
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
best="" ; best_ms=999
v() {
  line=$(env "$@" timeout 30 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1)
  echo "$* | $(echo "$line" | cut -c40-160)"
  ms=$(echo "$line" | awk '{print $3}')
  if python3 -c "import sys; sys.exit(not (float('$ms') < float('$best_ms')))" 2>/dev/null; then best="$*"; best_ms=$ms; fi
}
v EINC_SMALLMN=1
v EINC_SMALLMN_BK=64
v EINC_SMALLMN_MINB=1 EINC_SMALLMN_QU=8
v EINC_SMALLMN_OCTETS=1
echo "best: $best ($best_ms ms) ($SECONDS s)"
if [ "$best" != "EINC_SMALLMN=1" ] && [ -n "$best" ]; then
  env $best timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py > "$OUT/smallmn-best.txt" 2>&1
  echo "smallmn tests with the best: rc=$? $(tail -1 "$OUT/smallmn-best.txt")"
fi
left=$((END - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > "$OUT/tccg-fp32.txt" 2>&1
  echo "tccg rc=$? ($SECONDS s)"; grep -iE "geometric|geomean" "$OUT/tccg-fp32.txt" | tail -2 | cut -c1-200
  ls "$OUT/results" 2>/dev/null | head
else
  echo "no time left for TCCG-24 ($left s)"
fi
