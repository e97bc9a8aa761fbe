#!/usr/bin/env bash
# Session 22, call e: where bf16 ao2mo ap,srqp's ws1p kernel waits (ncu source counters:
# SASS stall samples) -- the last bf16 TCCG case below 1x that is not a plain GEMM.
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 ncu --clock-control none -k regex:einc_wgmma --launch-skip 2 --launch-count 1 --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy -o $OUT/aqrs -f python3 scripts/one_einsum.py 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' bfloat16 > /dev/null 2>&1
ncu --import $OUT/aqrs.ncu-rep --page source --print-source sass --csv > $OUT/aqrs-sass.csv 2>&1; wc -l $OUT/aqrs-sass.csv
ncu --import $OUT/aqrs.ncu-rep 2>&1 | grep -E "Duration|Throughput|Registers|Warp Cycles|Issued|Eligible|Active Warps|Shared Memory Configuration Size|Block Limit|Achieved" | head -30
echo "done $((SECONDS-T0))s"
