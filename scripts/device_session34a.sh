#!/usr/bin/env bash
# Session 34, call a: today's tree on whatever card comes (an H200 is what the figures
# want): the skinny_mma GPU tests (bkac's ragged TMA edge shape has never run on a device), both
# TCCG-24 suites (each row now records the cost model's prediction: the markdown's "Cost model"
# line), the intensli section and the main bench; last, an A/B of skinny against the tiles on the
# one plan session 34's cost model changed. `einc tune` on the model's furthest steps: 34b.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
timeout 90 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_skinny_mma.py > /tmp/sk.txt 2>&1
grep -E "^(FAILED|E  )" /tmp/sk.txt | head -8; tail -1 /tmp/sk.txt
echo "--- suites $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
for dt in bfloat16 float32; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --repeat 15 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
  f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md 2>/dev/null | head -1)
  [ -n "$f" ] && grep -E "^\| [0-9]+ \|" "$f" | awk -F'|' '$9+0 < 1.03 {print $3, $4, $9}'
  [ -n "$f" ] && grep "^Cost model" "$f"
done
echo "--- intensli $((SECONDS-T0))s"
timeout 90 python3 -m einc bench --backend cuda --suite intensli 2>&1 | grep -v Warn | grep -E "^intensli|cost model|saved"
echo "--- bench $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "--- the one choice the new skinny rates move on the H200 (1 of ~3100 random plans) $((SECONDS-T0))s"
ROUNDS=4 timeout 60 python3 scripts/ab_modes.py env.EINC_SKINNY 1,0 float32 'dgc,dcf->gfd:d=4096,g=72,c=8,f=32' 2>&1 | grep -v Warn
echo "done $((SECONDS-T0))s"
