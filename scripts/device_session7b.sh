#!/usr/bin/env bash
# Session 7, call 2: ccsd_t's limits -- mma.sync tiles (bf16), the SIMT gett's load
# switches (fp32), the bandwidth of its permuted store pattern, the plan's short-K tile.
set -u
source scripts/device_env.sh
T='amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24'
python3 scripts/tile_sweep.py bfloat16 "$T" default mma64x64 mma128x128 mma128x256
for sw in EINC_GETT_KVEC=0 EINC_GETT_MNVEC=0 EINC_GETT_LANES=rows EINC_GETT_LANES=warps; do
  echo "--- $sw"; env $sw python3 scripts/tile_sweep.py float32 "$T" 128x128x8 | tail -1
done
python3 - <<'PY'
import torch
from einc.bench_cuda import _events_median
for dt in (torch.bfloat16, torch.float32):
    # C[k,j,i,c,b,a] written from a GEMM-shaped [c,b,k | j,i,a]-ordered source: the store pattern
    src = torch.randn(20, 20, 20, 20, 24, 24, device="cuda").to(dt)  # c b k j i a
    dst = torch.empty(20, 20, 24, 20, 20, 24, device="cuda", dtype=dt)  # k j i c b a
    v = src.permute(2, 3, 4, 0, 1, 5)
    t, _ = _events_median(torch, lambda i: dst.copy_(v), 10, 3)
    n = dst.numel() * dst.element_size()
    print(f"permuted copy {dt}: {t*1e6:.1f} us, {2*n/t/1e12:.2f} TB/s (read+write), write {n/t/1e12:.2f} TB/s")
    z = torch.empty_like(dst)
    t, _ = _events_median(torch, lambda i: z.fill_(1), 10, 3)
    print(f"fill {dt}: {t*1e6:.1f} us, {n/t/1e12:.2f} TB/s")
PY
python3 scripts/case_bench.py bfloat16 "$T" 'ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84' 'bq,srqa->srba:a=96,b=84,q=96,r=84,s=84' 'cr,srba->scba:a=96,b=84,c=84,r=96,s=84'
M=gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_op_global_st.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_global_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,dram__bytes_write.sum
for dt in float32 bfloat16; do
  echo "=== ncu $dt ccsd_t"
  timeout 90 ncu --clock-control none -k regex:einc_gett\|einc_wgmma --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py "$T" $dt 2>&1 | grep -E "einc_|duration|pct|sectors|bytes|stalled|inst_executed" | sed 's/  */ /g'
done
