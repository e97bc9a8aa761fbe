#!/usr/bin/env bash
# Session 7, call 3: the own-staging warp-specialised wgmma tile against s3 and the plan's
# tiles on the short-K / output-bound cases; its GPU tests; racecheck with blocks walking tiles.
set -u
source scripts/device_env.sh
W="default wgmma128x128s3 wgmma128x128wse"
python3 scripts/tile_sweep.py bfloat16 'amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' $W
python3 scripts/tile_sweep.py bfloat16 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' $W
python3 scripts/tile_sweep.py bfloat16 'bq,srqa->srba:a=96,b=84,q=96,r=84,s=84' $W
python3 scripts/tile_sweep.py bfloat16 'lki,jl->kji:i=384,j=376,k=376,l=384' default wgmma128x128wse
python3 scripts/tile_sweep.py bfloat16 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' default wgmma128x128wse
python3 scripts/tile_sweep.py bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248' default wgmma128x128wse
python3 -m pytest -q -m gpu tests/test_mma.py -x 2>&1 | tail -3
compute-sanitizer --tool racecheck python3 scripts/wse_cases.py 2>&1 | tail -6
compute-sanitizer --tool memcheck python3 scripts/wse_cases.py 2>&1 | tail -3
