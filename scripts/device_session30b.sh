#!/usr/bin/env bash
# Session 30, call b: wsp4 mode 1 with its leader waiting on an mbarrier (staged[wg]) instead of
# a named barrier (30a's racecheck flagged the bar.sync form) -- GPU tests, racecheck /
# synccheck / memcheck, rotated A/B of modes 0, 1, 2, and the bf16 suite alternated 0 / 1.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 120 python3 -m pytest -q -m gpu tests/test_mma.py -k "wsp4 or cluster_grid" -p no:cacheprovider 2>&1 | grep -E "^(FAILED|E  )|passed|failed" | head -12
S='ki,jk->ji:i=2112,j=2104,k=1152'
for v in 1 2; do for tool in racecheck synccheck memcheck; do
  [ $v = 2 ] && [ $tool = memcheck ] && continue
  echo -n "wsp4 mode $v $tool: "; EINC_WGMMA_192P4=$v timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/sk_ncu_case.py $S bfloat16 2>&1 | tail -1
done; done
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=10 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_wgmma.WIDE_FOUR 0,1,2 bfloat16 'ki,jk->ji:i=7248,j=7240,k=7248' 'njmi,kmln->lkji:i=96,j=84,k=84,l=84,m=84,n=96' 2>&1 | grep -v Warn
echo "--- suites $((SECONDS-T0))s"
for v in 0 1 0 1; do echo "WIDE_FOUR=$v"; EINC_WGMMA_192P4=$v bash scripts/device_suite.sh bfloat16 | grep -E "geometric|below"; done
echo "done $((SECONDS-T0))s"
