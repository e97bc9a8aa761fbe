#!/usr/bin/env bash
# Session 10: the TMA producer for the warp-specialised wgmma tiles. Its GPU tests first
# (both producers), then TMA against cp.async on the GEMMs (scripts/tma_compare.py), then
# every GPU test. (bash scripts/device_session10a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 120 python3 -m pytest -q -x -n 8 -m gpu -p no:cacheprovider tests/test_mma.py -k "ws or tma" 2>&1 | tail -4
echo "== ws/tma tests $((SECONDS-T0))s"
timeout 150 python3 scripts/tma_compare.py 2>&1 | cut -c1-230
echo "== compare $((SECONDS-T0))s"
source scripts/device_gpu_tests.sh
echo "done $((SECONDS-T0))s"
