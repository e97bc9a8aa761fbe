#!/usr/bin/env bash
# Session 33, call b: the A/B (TMA on / off) on all eight bf16 intensli cases with the copy
# bandwidth of the same run (33a's A/B left out akdbc, abkc, cabk; the suite after 33a hinted akdbc lost 21% with TMA, a cross-run
# comparison), and ncu of akdbc both ways.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
python3 -c "
import torch; from einc.bench_cuda import _events_median
x = torch.empty(2**29, dtype=torch.uint8, device='cuda'); y = torch.empty_like(x)
t = _events_median(torch, lambda i: y.copy_(x), repeat=10, inner=5)[0]; print(f'copy {2 * 2**29 / t / 1e12:.3f} TB/s')"
ROUNDS=3 timeout 150 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.TMA 1,0 bfloat16 \
  'akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48' 'abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84' \
  'cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96' 'akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96' \
  'akb,jk->jba:a=384,b=384,j=24,k=384' 'abk,kj->bja:a=384,b=376,j=24,k=384' \
  'dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36' 'cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36' 2>&1 | grep -v Warn
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
for t in 1 0; do
  echo "=== ncu akdbc TMA=$t"
  EINC_SKINNY_MMA_TMA=$t timeout 45 ncu --clock-control none -k regex:einc_skinny --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/sk_ncu_case.py 'akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48' bfloat16 2>&1 \
    | grep -E "duration|pct|stalled|bytes" | sed -e 's/  */ /g' -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//'
done
echo "done $((SECONDS-T0))s"
