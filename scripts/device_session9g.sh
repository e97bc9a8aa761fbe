#!/usr/bin/env bash
# Session 9, last call: every GPU test, TCCG-24 fp32 and bf16 with plots (the 96-wide tile now
# the model's pick on ao2mo bq,srqa / cr,srba), the two cases through tile_sweep beside the
# 128 tile. (bash scripts/device_session9g.sh)
set -u
source scripts/device_env.sh
export EINC_RESULTS_DIR=$OUT
T0=$SECONDS
OUT_KEEP=$OUT; OUT=/tmp/gpu-out; mkdir -p $OUT
TEST_S=240 source scripts/device_gpu_tests.sh
cp /tmp/gpu-out/gpu-tests.txt $OUT_KEEP/ 2>/dev/null
OUT=$OUT_KEEP
for dt in float32 bfloat16; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --plot > /tmp/tccg-$dt.txt 2>&1
  echo "== TCCG-24 $dt rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-$dt.txt)"
done
grep -E "ao2mo|kmli" /tmp/tccg-float32.txt | cut -c1-120
for c in "bq,srqa->srba:a=96,b=84,q=96,r=84,s=84" "cr,srba->scba:a=96,b=84,c=84,r=96,s=84"; do
  timeout 60 python3 scripts/tile_sweep.py float32 "$c" default 128x128x8 2>&1 | cut -c1-110
done
echo "done $((SECONDS-T0))s"
