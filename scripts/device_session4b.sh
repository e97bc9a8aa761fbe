#!/usr/bin/env bash
# Session 4 diagnosis: which kernels crash the device's NVRTC (calling thread vs a big-stack
# thread), then the smallmn tests and 72^5 with the big-stack compile, then Sycamore slice 0
# step by step in one process. (bash scripts/device_session4b.sh; probe/ carried)
set -u
source scripts/device_env.sh
ulimit -s; python3 -c "from einc.runtime.cuda import nvrtc_version; print('nvrtc', nvrtc_version())"
echo "== nvrtc probe"; timeout 150 python3 scripts/nvrtc_probe.py probe
echo "== smallmn gpu tests"; timeout 90 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -3
T72="abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72"
timeout 30 python3 scripts/case_bench.py float32 $T72 2>&1 | tail -2
echo "== sycamore slice 0"; timeout ${SYC_S:-150} python3 scripts/syc_probe.py 34.36GB ${SYC_B:-110} 2>&1 | grep -v Warn | tail -30
