#!/usr/bin/env bash
# Session 6, last call: every GPU test after the wgmma tile rule (tabled M or K < 256 keep the
# all-loader tiles), and TCCG-24 bf16 and fp32 with plots. Only the results go under $OUT.
# (bash scripts/device_session6g.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
source scripts/device_gpu_tests.sh
OUT=$OUT_KEEP
for dt in bfloat16 float32; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > /tmp/tccg-$dt.txt 2>&1
  echo "== TCCG-24 $dt rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-$dt.txt)"
done
ls $OUT
