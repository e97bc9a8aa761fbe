#!/usr/bin/env bash
# Session 6: an experiment on the ws wgmma tiles (the roles meeting on barrier 0, non-aligned, instead
# of named barrier 2; not kept: racecheck still reported 17 hazards) -- against numpy, racecheck and
# synccheck with tiles walked per block,
# and one 8192^3 fp16 timing beside cuBLAS. (bash scripts/device_session6f.sh)
set -u
WS_STEPS="cases time san" TIME_TILES=wgmma128x256ws TIME_CASES="float16:ij,jk->ik bfloat16:ij,jk->ik" \
  TIME_S=60 bash scripts/device_wgmma6.sh 2>&1 | grep -v '^$' | cut -c1-200 | head -24
