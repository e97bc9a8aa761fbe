#!/usr/bin/env bash
# Session 18, call a: einc tune on the fp32 split-K ccsd cases with the two-mode splits
# (exact cuts, 141 = l by 3 x k by 47) now offered and usable, then the tuned plans against
# torch.einsum (case_bench reads the tuned store); the GPU tests of the tuned split.
#   (bash scripts/device_session18a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
rm -rf /tmp/einc-cache/tuned* 2>/dev/null
C2="lki,kjl->ji:i=384,j=376,k=376,l=384"
C3="lik,jkl->ji:i=384,j=376,k=384,l=384"
echo "== default fp32 ($((SECONDS-T0))s)"
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
echo "== tune fp32 ($((SECONDS-T0))s)"
timeout 120 python3 -m einc tune "lki,kjl->ji" --shapes 384x376x384,376x376x384 --dtype float32 --repeat 5 2>&1 | grep -v "64x64x8" | head -40
timeout 120 python3 -m einc tune "lik,jkl->ji" --shapes 384x384x384,376x384x384 --dtype float32 --repeat 5 2>&1 | grep -v "64x64x8" | head -40
echo "== tuned fp32 ($((SECONDS-T0))s)"
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
rm -rf /tmp/einc-cache/tuned* 2>/dev/null
echo "== GPU tests of the tuned two-mode split ($((SECONDS-T0))s)"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cost_tune.py tests/test_gpu_plan_rewrites.py -k "split" 2>&1 | tail -4
echo "done $((SECONDS-T0))s"
