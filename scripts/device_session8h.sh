#!/usr/bin/env bash
# Session 8, after the review's refactor (one walk shared by stream and stream_mma, one mma
# slice shared by mma and stream_mma; SASS +4 LDS.64 a tile): the stream GPU tests and
# ccsd_t in both dtypes beside torch.einsum. (bash scripts/device_session8h.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_stream.py 2>&1 | grep -E "FAILED|passed|failed" | head
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
 cmji,bakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
for dt in float32 bfloat16; do echo "== $dt ($((SECONDS-T0))s)"; timeout 40 python3 scripts/case_bench.py $dt $CT 2>&1 | tail -4 | cut -c1-110; done
echo "done $((SECONDS-T0))s"
