#!/usr/bin/env bash
# Session 19, call a: the permute kernel (mode-set tiles cut to divisors) on the ccsd ijkl
# GEMM-order copies that now run on the transpose kernel's ragged 64x64 tiles (njmi->jinm,
# kmln->lknm) or on reduce_cols (lnim->linm: m unit-stride both sides), against the default.
#   (bash scripts/device_session19a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
for r in 1 2; do
  echo "== default ($((SECONDS-T0))s)"; timeout 120 python3 scripts/step_breakdown.py
  echo "== EINC_PERMUTE_WIDE=1 ($((SECONDS-T0))s)"; EINC_PERMUTE_WIDE=1 timeout 120 python3 scripts/step_breakdown.py
done
echo "done $((SECONDS-T0))s"
