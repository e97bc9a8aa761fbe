#!/usr/bin/env bash
# Session 15, call a: where the below-1x bf16 steps lose their time. The write floor of 184 MB,
# the cases beside torch.einsum, ncu on einc's and torch's kernels for ccsd_t (stream_mma),
# ao2mo ap,srqp (ws1p) and ccsd lki,jl (wsp).   (bash scripts/device_session15a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
python3 scripts/write_floor.py 184.32
python3 scripts/write_floor.py 113.8
CT="amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24"
AP="ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84"
LK="lki,jl->kji:i=384,j=376,k=376,l=384"
echo "== bench ($((SECONDS-T0))s)"
timeout 120 python3 scripts/case_bench.py bfloat16 $CT "bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" "bmki,cajm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24" $AP $LK 2>&1 | cut -c1-140
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
cat > /tmp/torch_one.py <<'PY'
import sys, torch
subs, sz = sys.argv[1].split(":"); dt = getattr(torch, sys.argv[2])
s = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
ops = [torch.randn(*[s[l] for l in t], device="cuda").to(dt) for t in subs.split("->")[0].split(",")]
for _ in range(3): torch.einsum(subs, *ops)
torch.cuda.synchronize()
PY
for c in $CT $AP $LK; do
  echo "== ncu einc $c ($((SECONDS-T0))s)"
  timeout 90 ncu --clock-control none -k regex:"einc_(stream|wgmma)" --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py "$c" bfloat16 2>&1 | grep -E "einc_|duration|pct|bytes|sectors|registers|size|stalled|inst_executed|ratio|conflicts" | sed 's/  */ /g' | cut -c1-110
  echo "== ncu torch $c ($((SECONDS-T0))s)"
  timeout 90 ncu --clock-control none --launch-count 14 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_write.sum,dram__bytes_read.sum,launch__grid_size \
    python3 /tmp/torch_one.py "$c" bfloat16 2>&1 | grep -E "^  [a-zA-Z_]|duration|pct|bytes|size" | sed 's/  */ /g' | cut -c1-150
done
echo "done $((SECONDS-T0))s"
