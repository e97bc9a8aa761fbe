#!/usr/bin/env bash
# Session 26, call a: (1) order="K" results laid out as numpy's (einc.k_order): GPU tests, then
# the 16 TCCG-24 cases whose layout it changes, K against C, bf16 and fp32; (2) the 192x192
# wgmma tile (opt-in) against 128x256ws on bf16/fp16 ki,jk, with its GPU tests.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_k_order.py 2>&1 | tail -3
CH=$(python3 scripts/tccg_changed_by_k.py)
echo "--- K against C $((SECONDS-T0))s"
for dt in bfloat16 float32; do
timeout 100 python3 scripts/case_bench.py $dt $CH 2>&1 | grep -v Warn
CASE_ORDER=C timeout 100 python3 scripts/case_bench.py $dt $CH 2>&1 | grep -v Warn | tail -16
done
echo "--- 192 tests $((SECONDS-T0))s"
timeout 100 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_mma.py -k "ws_against_numpy and 192" 2>&1 | tail -3
echo "--- ki,jk: 192 on / off $((SECONDS-T0))s"
KI='ki,jk->ji:i=7248,j=7240,k=7248'
for r in 1 2; do
EINC_WGMMA_192=1 timeout 60 python3 scripts/case_bench.py bfloat16 $KI 'ij,jk->ik:i=8192,j=8192,k=8192' 2>&1 | tail -2
EINC_WGMMA_192=0 timeout 60 python3 scripts/case_bench.py bfloat16 $KI 'ij,jk->ik:i=8192,j=8192,k=8192' 2>&1 | tail -2
done
EINC_WGMMA_192=1 timeout 40 python3 scripts/case_bench.py float16 $KI 2>&1 | tail -1
EINC_WGMMA_192=0 timeout 40 python3 scripts/case_bench.py float16 $KI 2>&1 | tail -1
echo "done $((SECONDS-T0))s"
