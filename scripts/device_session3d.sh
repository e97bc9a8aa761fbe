#!/usr/bin/env bash
# One device call: skinny occupancy experiment (RM=1 at 3 blocks/SM) and ncu stall reasons.
set -u
source scripts/device_env.sh
INTENSLI="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
echo "== default"; timeout 120 python3 scripts/case_bench.py float32 $INTENSLI 2>&1 | tail -8
echo "== RM=1, 3 blocks/SM"; EINC_SKINNY_RM=1 EINC_SKINNY_MINB=3 timeout 120 python3 scripts/case_bench.py float32 $INTENSLI 2>&1 | tail -8
S=smsp__average_warps_issue_stalled
M=$S\_long_scoreboard_per_issue_active.ratio,$S\_short_scoreboard_per_issue_active.ratio,$S\_mio_throttle_per_issue_active.ratio,$S\_lg_throttle_per_issue_active.ratio,$S\_barrier_per_issue_active.ratio,$S\_wait_per_issue_active.ratio,$S\_math_pipe_throttle_per_issue_active.ratio,$S\_not_selected_per_issue_active.ratio,$S\_selected_per_issue_active.ratio,$S\_no_instruction_per_issue_active.ratio,$S\_dispatch_stall_per_issue_active.ratio,$S\_drain_per_issue_active.ratio,$S\_membar_per_issue_active.ratio,$S\_sleeping_per_issue_active.ratio,$S\_branch_resolving_per_issue_active.ratio,$S\_imc_miss_per_issue_active.ratio,$S\_tex_throttle_per_issue_active.ratio
echo "== ncu stalls, akdbc default"
timeout 120 ncu --clock-control none -k regex:einc_skinny --launch-skip 2 --launch-count 1 --metrics $M python3 scripts/one_einsum.py "akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48" 2>&1 | grep -E "stalled" | sed 's/smsp__average_warps_issue_stalled_//'
