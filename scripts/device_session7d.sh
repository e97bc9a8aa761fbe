#!/usr/bin/env bash
# Session 7, call 4: the wgmma epilogue's 8-column 16-byte stores on the output-bound cases
# and the big GEMMs (no regression), GPU tests of the tensor-core kernels, memcheck of the
# warp-specialised tiles walking several tiles.
set -u
source scripts/device_env.sh
python3 scripts/tile_sweep.py bfloat16 'amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24' default wgmma128x128wse wgmma256x128
python3 scripts/tile_sweep.py bfloat16 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' default wgmma128x128wse wgmma256x128
python3 scripts/tile_sweep.py bfloat16 'bq,srqa->srba:a=96,b=84,q=96,r=84,s=84' default
python3 scripts/tile_sweep.py bfloat16 'lki,jl->kji:i=384,j=376,k=376,l=384' default
python3 scripts/tile_sweep.py bfloat16 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' default
python3 scripts/tile_sweep.py bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248' default
python3 scripts/tile_sweep.py bfloat16 'ij,jk->ik:i=8192,j=8192,k=8192' default wgmma256x128ws
python3 scripts/tile_sweep.py float16 'ij,jk->ik:i=8192,j=8192,k=8192' default
python3 -m pytest -q -m gpu tests/test_mma.py 2>&1 | tail -2
for t in wgmma128x128wse wgmma256x128ws wgmma128x128s3; do
  compute-sanitizer --tool memcheck python3 scripts/wse_cases.py $t 2>&1 | grep -E "rel err|SUMMARY|Invalid|at 0x|by thread" | head -8
done
