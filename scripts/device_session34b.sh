#!/usr/bin/env bash
# Session 34, call b (after 34a, on the warm machine if it still is): `einc tune` on the bf16
# steps the cost model is furthest from (1.4-1.9x optimistic on the H100's last suite): does any
# candidate beat the model's choice, or is the model wrong about the kernel it picked?
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
echo "--- tune, the model's furthest bf16 steps $((SECONDS-T0))s"
for c in "lki,kjl->ji 384x376x384,376x376x384" "kmli,ljm->kji 84x96x84x96,84x84x96" "kli,lj->kji 376x376x384,376x384" \
         "bq,srqa->srba 84x96,84x84x96x96" "cr,srba->scba 84x96,84x96x84x96"; do
  set -- $c
  timeout 75 python3 -m einc tune "$1" --shapes "$2" --dtype bfloat16 --repeat 10 2>&1 | grep -v Warn | tail -14
done
echo "done $((SECONDS-T0))s"
