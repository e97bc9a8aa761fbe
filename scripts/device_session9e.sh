#!/usr/bin/env bash
# Session 9: what `einc tune` measures for the fp32 TCCG cases still below 1x (its table of
# candidates, median of 5 each), for the next session's model work. (bash scripts/device_session9e.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
for c in "lki,jl->kji 384x376x384,376x384" "lki,kjl->ji 384x376x384,376x376x384" "lik,jkl->ji 384x384x384,376x384x384" \
         "ap,srqp->srqa 96x96,84x84x84x96" "lnim,kmjn->lkji 84x96x96x84,84x96x84x96"; do
  set -- $c
  echo "== tune $1 $2 ($((SECONDS-T0))s)"
  timeout 100 python3 -m einc tune "$1" --shapes $2 --dtype float32 --repeat 5 2>&1 | tail -22 | cut -c1-150
done
echo "done $((SECONDS-T0))s"
