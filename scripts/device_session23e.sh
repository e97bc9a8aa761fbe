#!/usr/bin/env bash
# Session 23, call e: is bf16 lki,jl's 0.82x in call d's suite the wsp kernel (whose loop now
# walks EincWgmmaUnits) or the run? ncu kernel time against session 22's 83.2 us, and case_bench twice.
set -u
source scripts/device_env.sh
T0=$SECONDS
for rep in 1 2; do
  timeout 60 ncu -k regex:einc_wgmma --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum \
    python3 scripts/sk_ncu_case.py 'lki,jl->kji:i=384,j=376,k=376,l=384' bfloat16 2>&1 | grep -E "gpu__time_duration"
  timeout 60 python3 scripts/case_bench.py bfloat16 'lki,jl->kji:i=384,j=376,k=376,l=384' 'ki,jk->ji:i=7248,j=7240,k=7248' 2>&1 | tail -2
done
echo "done $((SECONDS-T0))s"
