#!/usr/bin/env bash
# Session 8: the fp32 stream kernel's lane orders and k-loop unrolling on TCCG ccsd_t
# (EINC_STREAM_LANES x EINC_STREAM_KU), beside torch.einsum. (bash scripts/device_session8f.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_stream.py -k "not mma" 2>&1 | tail -1
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
for l in rows pairs warps warp-pairs; do for ku in 8 all; do
  echo "== lanes=$l ku=$ku ($((SECONDS-T0))s)"
  EINC_STREAM_LANES=$l EINC_STREAM_KU=$ku timeout 40 python3 scripts/case_bench.py float32 $CT 2>&1 | tail -4 | cut -c1-110
done; done
echo "done $((SECONDS-T0))s"
