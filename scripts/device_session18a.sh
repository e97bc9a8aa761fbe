#!/usr/bin/env bash
# Session 18, call a: einc tune on the fp32 split-K ccsd cases with the two-mode splits
# (exact cuts, 141 = l by 3 x k by 47) now offered and usable, then the tuned plans against
# torch.einsum (case_bench reads the tuned store); ap,srqp bf16 on the stream kernel (K = 96
# forced past K_MAX_MMA) against the default.   (bash scripts/device_session18a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
rm -rf /tmp/einc-cache/tuned* 2>/dev/null
C2="lki,kjl->ji:i=384,j=376,k=376,l=384"
C3="lik,jkl->ji:i=384,j=376,k=384,l=384"
echo "== default fp32 ($((SECONDS-T0))s)"
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
echo "== tune fp32 ($((SECONDS-T0))s)"
timeout 120 python3 -m einc tune "lki,kjl->ji" --shapes 384x376x384,376x376x384 --dtype float32 --repeat 5 2>&1 | grep -v "64x64x8" | head -40
timeout 120 python3 -m einc tune "lik,jkl->ji" --shapes 384x384x384,376x384x384 --dtype float32 --repeat 5 2>&1 | grep -v "64x64x8" | head -40
echo "== tuned fp32 ($((SECONDS-T0))s)"
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
rm -rf /tmp/einc-cache/tuned* 2>/dev/null
echo "== ap,srqp bf16 default / stream K=96 ($((SECONDS-T0))s)"
AP="ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84"
BQ="bq,srqa->srba:a=96,b=84,q=96,r=84,s=84"
for r in 1 2; do
  timeout 60 python3 scripts/case_bench.py bfloat16 $AP $BQ
  EINC_STREAM=1 EINC_STREAM_MMA_KMAX=96 timeout 60 python3 scripts/case_bench.py bfloat16 $AP $BQ
done
echo "done $((SECONDS-T0))s"
