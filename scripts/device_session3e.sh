#!/usr/bin/env bash
# One device call: skinny after the epilogue/tile-decode change, fp32 and bf16, + skinny GPU tests.
set -u
source scripts/device_env.sh
INTENSLI="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_skinny.py 2>&1 | tail -2
for dt in float32 bfloat16; do echo "== $dt"; timeout 120 python3 scripts/case_bench.py $dt $INTENSLI 2>&1 | tail -8; done
