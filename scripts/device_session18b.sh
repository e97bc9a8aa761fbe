#!/usr/bin/env bash
# Session 18, call b: why the bf16 tuned two-mode split test failed in 18a; the model's new
# fp32 split default against torch.einsum; TCCG-24 bf16 and fp32 with the charts on this tree.
#   (bash scripts/device_session18b.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
(cd tests && PYTHONPATH=$PYTHONPATH:$PWD timeout 60 python3 ../scripts/split_check.py 2>&1 | tail -6)
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_cost_tune.py -k "two_modes" --tb=short 2>&1 | grep -E "^E|Error|passed|failed" | head -20
echo "== fp32 split default ($((SECONDS-T0))s)"
C2="lki,kjl->ji:i=384,j=376,k=376,l=384"
C3="lik,jkl->ji:i=384,j=376,k=384,l=384"
timeout 60 python3 scripts/case_bench.py float32 $C2 $C3
export EINC_RESULTS_DIR=$OUT
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype bfloat16 --plot > /tmp/tccg-bf16.txt 2>&1
echo "== TCCG-24 bf16 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-bf16.txt)"
grep -E "^\| [0-9]" /tmp/tccg-bf16.txt | cut -c1-140
timeout 170 python3 -m einc bench --backend cuda --suite tccg24 --dtype float32 --plot > /tmp/tccg-fp32.txt 2>&1
echo "== TCCG-24 fp32 rc=$? ($((SECONDS-T0))s): $(grep -E 'geometric' /tmp/tccg-fp32.txt)"
grep -E "^\| [0-9]" /tmp/tccg-fp32.txt | cut -c1-140
echo "done $((SECONDS-T0))s"
