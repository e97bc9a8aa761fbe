#!/usr/bin/env bash
# Session 22, call a: where the below-1x cases spend their time -- case_bench, the calls'
# timelines (kernels and gaps), ncu source counters (SASS stall samples) of the ccsd_t
# stream_mma kernel.  (bash scripts/device_session22a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
CASES_BF='ki,jk->ji:i=7248,j=7240,k=7248 lki,jl->kji:i=384,j=376,k=376,l=384 njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96 ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24'
timeout 200 python3 scripts/case_bench.py bfloat16 $CASES_BF 2>&1 | tail -9
timeout 60 python3 scripts/case_bench.py float32 'lki,jl->kji:i=384,j=376,k=376,l=384' 2>&1 | tail -2
echo "--- timelines $((SECONDS-T0))s"
timeout 150 python3 scripts/timeline.py bfloat16 'bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' 'lki,jl->kji:i=384,j=376,k=376,l=384' 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 2>&1 | grep -v Warning
timeout 60 python3 scripts/timeline.py float32 'lki,jl->kji:i=384,j=376,k=376,l=384' 2>&1 | grep -v Warning
echo "--- ncu $((SECONDS-T0))s"
timeout 150 ncu --clock-control none -k regex:einc_stream --launch-skip 2 --launch-count 1 --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis -o $OUT/ccsdt -f python3 scripts/one_einsum.py 'bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' bfloat16 > /dev/null 2>&1
ncu --import $OUT/ccsdt.ncu-rep --page source --print-source sass --csv > $OUT/ccsdt-sass.csv 2>&1; wc -l $OUT/ccsdt-sass.csv; head -3 $OUT/ccsdt-sass.csv | cut -c1-600
ncu --import $OUT/ccsdt.ncu-rep 2>&1 | grep -E "Duration|Throughput|Registers|Warp Cycles|Issued|Eligible|Active Warps" | head -20
echo "done $((SECONDS-T0))s"
