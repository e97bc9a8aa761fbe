#!/usr/bin/env bash
# One device call: skinny GPU tests, the intensli + skinny-K cases beside torch.einsum,
# the sanitizers. Usage (device, repo root): bash scripts/device_session3.sh [tccg]
set -u
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "== skinny gpu tests"
timeout 200 python3 -m pytest -q -m gpu tests/test_skinny.py -p no:cacheprovider 2>&1 | tail -6
INTENSLI="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
for run in float32: bfloat16: bfloat16:1; do
  dt=${run%%:*}; force=${run#*:}
  echo "== cases $dt EINC_SKINNY=$force"
  EINC_SKINNY=$force timeout 200 python3 scripts/case_bench.py $dt $INTENSLI "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | tail -10
done
if [ "${1:-}" = tccg ]; then
  timeout 300 python3 -m einc bench --backend cuda --suite tccg24 --plot 2>&1 | tail -28
fi
echo "== sanitizers"
timeout 400 bash scripts/sanitize.sh
