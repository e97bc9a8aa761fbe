#!/usr/bin/env bash
# Session 22, call f: the resident-B wgmma tile (ws1r) -- its GPU tests, the sanitizers,
# ncu on bf16 ap,srqp against ws1p (EINC_WGMMA_RESIDENT_B=0), case_bench alternated.
set -u
source scripts/device_env.sh
T0=$SECONDS
python3 -c "
import einc.api; from einc.codegen.cuda.emit import emit_step
p = einc.api.plan_for('ap,srqp->srqa', [(96, 96), (5, 6, 30, 96)], 'bfloat16', backend='cuda'); print(emit_step(p, p.steps[-1], 'sm_90').key[2])"
timeout 240 python3 -m pytest -q -m gpu tests/test_mma.py -k "ws_against_numpy and ws1r" 2>&1 | grep -E "FAILED|passed|failed|Error" | head -12
echo "--- sanitizers $((SECONDS-T0))s"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 scripts/resident_b_case.py 2>&1 | tail -2
done
echo "--- ncu $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__occupancy_limit_shared_mem,launch__shared_mem_per_block_dynamic,smsp__issue_active.avg.pct_of_peak_sustained_active
for rb in 1 0; do
  echo "== ap,srqp resident=$rb"
  EINC_WGMMA_RESIDENT_B=$rb timeout 60 ncu --clock-control none -k regex:einc_wgmma --launch-skip 2 --launch-count 1 --metrics $M python3 scripts/one_einsum.py 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' bfloat16 2>&1 | grep -E "duration|pct|limit|dynamic" | sed 's/  */ /g'
done
echo "--- bench $((SECONDS-T0))s"
for r in 1 2; do
  for rb in 1 0; do echo "resident=$rb"; EINC_WGMMA_RESIDENT_B=$rb timeout 60 python3 scripts/case_bench.py bfloat16 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' 2>&1 | tail -1; done
done
echo "done $((SECONDS-T0))s"
