#!/usr/bin/env bash
# Session 8: stream_mma's 128x64 tile (warps of 32x32, three blocks per SM) against 128x128
# on bf16 ccsd_t, both walking directions; the mma GPU tests for both tiles. (bash scripts/device_session8g.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_stream.py -k mma 2>&1 | grep -E "FAILED|passed|failed" | head
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
for t in 128x128 128x64; do for a in auto m; do
  echo "== tile=$t along=$a ($((SECONDS-T0))s)"
  EINC_STREAM_MMA_TILE=$t EINC_STREAM_ALONG=$a timeout 40 python3 scripts/case_bench.py bfloat16 $CT 2>&1 | tail -4 | cut -c1-110
done; done
echo "done $((SECONDS-T0))s"
