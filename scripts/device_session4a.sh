#!/usr/bin/env bash
# Session 4, first measuring call: the new GPU tests (streams, complex GEMM, smallmn), the
# Sycamore slices beside cotengra+torch, smallmn's experiment switches, einc.torch overhead
# split, `einc tune` on TCCG-24 SIMT cases below 1x. (bash scripts/device_session4a.sh)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
echo "== gpu tests (new)"
timeout 150 python3 -m pytest -q -rf -m gpu -p no:cacheprovider tests/test_streams.py tests/test_gpu_complex.py \
  tests/test_smallmn.py 2>&1 | tee "$OUT/gpu-tests-new.txt" | tail -5
echo "== sycamore, ${SLICES:-4} slices"
timeout ${SYC_S:-240} python3 scripts/sycamore_bench.py --devices 0 --slices "${SLICES:-4}" --profile \
  --json "$OUT/syc.json" 2>&1 | grep -v "^distributed\|Warning\|warn(" | tail -40
echo "== einc.torch overhead"; timeout 40 python3 scripts/torch_overhead.py 8
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
echo "== smallmn default / MINB=1 QU=8 / OCTETS=1"
timeout 30 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1
EINC_SMALLMN_MINB=1 EINC_SMALLMN_QU=8 timeout 30 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1
EINC_SMALLMN_OCTETS=1 timeout 30 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -1
for c in "amji,cbkm->kjicba 24x24x20x24,20x20x20x24" "ap,srqp->srqa 96x96,84x84x84x96" \
         "lik,jkl->ji 384x384x384,376x384x384"; do
  set -- $c
  echo "== tune $1 fp32"; timeout 45 python3 -m einc tune "$1" --shapes "$2" --dtype float32 --repeat 5 2>&1 | tail -12
done
