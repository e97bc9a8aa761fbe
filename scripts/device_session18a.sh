#!/usr/bin/env bash
# Session 18, call a: (1) the ws1p producer keeping a resident operand's slices (one tile
# column/row, no batch) and stream_mma's swizzled staging rows, against the tree before them
# (old/ = git archive of the commit before both), on the ao2mo and ccsd_t bf16 steps, alternated; (2) einc tune on the fp32 split-K ccsd cases with the
# two-mode splits (exact cuts) now offered and usable, then the tuned plans against
# torch.einsum; (3) the GPU tests of both changes.   (bash scripts/device_session18a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
rm -rf /tmp/einc-cache/tuned* 2>/dev/null
AP="ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84"
BQ="bq,srqa->srba:a=96,b=84,q=96,r=84,s=84"
CR="cr,srba->scba:a=96,b=84,c=96,r=84,s=84"
CT="a=24,b=20,c=20,i=24,j=20,k=20,m=24"
T1="amji,cbkm->kjicba:$CT"; T2="bmji,cakm->kjicba:$CT"; T3="cmji,bakm->kjicba:$CT"; T4="bmki,cajm->kjicba:$CT"
for r in 1 2; do
  echo "== ao2mo, ccsd_t bf16 new ($((SECONDS-T0))s)"
  timeout 90 python3 scripts/case_bench.py bfloat16 $AP $BQ $CR $T1 $T2 $T3 $T4
  echo "== ao2mo, ccsd_t bf16 old ($((SECONDS-T0))s)"
  (cd old && PYTHONPATH=/tmp/site:$PWD timeout 90 python3 scripts/case_bench.py bfloat16 $AP $BQ $CR $T1 $T2 $T3 $T4)
done
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
echo "== GPU tests ($((SECONDS-T0))s)"
timeout 200 python3 -m pytest -q -p no:cacheprovider -x tests/test_cost_tune.py tests/test_gpu_plan_rewrites.py \
  "tests/test_mma.py::test_wgmma_ws_against_numpy" tests/test_stream.py -k "split or ws1p or wsp or stream" 2>&1 | tail -4
echo "== memcheck ao2mo ws1p ($((SECONDS-T0))s)"
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "ap,srqp->srqa:a=96,p=96,q=44,r=42,s=40" bfloat16 2>&1 | tail -2
timeout 60 compute-sanitizer --tool racecheck --report-api-errors no python3 scripts/one_einsum.py "ap,srqp->srqa:a=96,p=96,q=44,r=42,s=40" bfloat16 2>&1 | tail -2
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/one_einsum.py "amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" bfloat16 2>&1 | tail -2
echo "done $((SECONDS-T0))s"
