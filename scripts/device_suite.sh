#!/usr/bin/env bash
# One TCCG-24 suite on the GPU machine (dtype in $1) with the roofline plot; prints the
# geometric means and each case below 1x torch.einsum. Sourced env: scripts/device_env.sh.
source scripts/device_env.sh
mkdir -p $EINC_RESULTS_DIR
echo "--- suite $1 $(date +%T)"
timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $1 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.0 {print "below 1x:", $4, $9}'
