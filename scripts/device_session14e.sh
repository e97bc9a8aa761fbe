#!/usr/bin/env bash
# Session 14, call e: the separate-staging tiles fall back to ring staging where a 4-byte C
# outgrows shared memory (GPU tests); default against forced 128x256ws on 16384x4096x256
# (the same kernel by key, timed 0.088 against 0.064 in 14b-d); 128x256wsp on K = 256-512.
#   (bash scripts/device_session14e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
echo "== tests"
timeout 200 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_mma.py -k "wgmma_ws and (ws1p4 or 256wsp)" 2>&1 | tail -3
echo "== default vs forced ($((SECONDS-T0))s)"
timeout 90 python3 scripts/default_vs_forced.py bfloat16 "ij,jk->ik:i=16384,j=4096,k=256" wgmma128x256ws 2>&1 | cut -c1-400
for c in "lki,jl->kji:i=384,j=376,k=376,l=384" "ij,jk->ik:i=8192,j=8192,k=512" "ij,jk->ik:i=4096,j=8192,k=384" "ik,jk->ij:i=8192,j=4096,k=256" "abk,kcd->acbd:a=160,b=170,k=512,c=80,d=160"; do
  echo "== $c ($((SECONDS-T0))s)"
  timeout 120 python3 scripts/tile_sweep.py bfloat16 "$c" default wgmma128x256wsp wgmma128x256ws wgmma128x256wsp default 2>&1 | tail -n 6
done
echo "== fp16 lki,jl ($((SECONDS-T0))s)"
timeout 120 python3 scripts/tile_sweep.py float16 "lki,jl->kji:i=384,j=376,k=376,l=384" default wgmma128x256wsp default wgmma128x256wsp 2>&1 | tail -n 5
echo "done $((SECONDS-T0))s"
