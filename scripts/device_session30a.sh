#!/usr/bin/env bash
# Session 30, call a: wsp4's store modes A/B'd with the order rotated per round (29e's A/B ran
# mode 2 last in every round), memcheck of mode 2, then the bf16 suite with modes 0 and 2 and
# the fp32 suite.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo -n "wsp4 mode 2 memcheck: "; EINC_WGMMA_192P4=2 timeout 60 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/sk_ncu_case.py 'ki,jk->ji:i=2112,j=2104,k=1152' bfloat16 2>&1 | tail -1
ROUNDS=8 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.WIDE_FOUR 0,1,2 bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248' 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 'ki,jk->ji:i=4800,j=4808,k=4800' 2>&1 | grep -v Warn
echo "--- suites $((SECONDS-T0))s"
bash scripts/device_suite.sh bfloat16
EINC_WGMMA_192P4=2 bash scripts/device_suite.sh bfloat16
bash scripts/device_suite.sh float32
echo "done $((SECONDS-T0))s"
