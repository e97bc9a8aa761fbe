#!/usr/bin/env bash
# Skinny kernel (TCCG intensli) on the H200: GPU tests, the eight intensli cases timed for a
# base tree beside this one (same run), the experiment switches A/B in one process
# (interleaved rounds), racecheck over the tile schedules, and ncu on two cases.
# (bash scripts/device_skinny6.sh [BASE_TREE])
#   BASE_TREE: a checkout of the commit to compare against (its scripts/case_bench.py runs
#   with its own einc); skipped when absent.
set -u
source scripts/device_env.sh
O=${OUT:-/tmp}
BASE=${1:-}
I="akb,jk->jba:a=384,b=384,j=24,k=384 abk,kj->bja:a=384,b=376,j=24,k=384 akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96 abkc,kj->cbja:a=96,b=84,c=96,j=24,k=84 cabk,kj->cjba:a=96,b=84,c=84,j=24,k=96 cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36 akdbc,jk->cjbda:a=48,b=36,c=48,d=36,j=24,k=48 dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36"
bench() {  # label [env...]: the eight cases, einc beside torch.einsum
  local label=$1; shift
  echo "== $label"
  env "$@" timeout 60 python3 scripts/case_bench.py float32 $I > "$O/bench-$label.txt" 2>&1
  tail -9 "$O/bench-$label.txt"
}
echo "== gpu tests (skinny)"
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_skinny.py > "$O/gpu-tests.txt" 2>&1
tail -3 "$O/gpu-tests.txt"
if [ -n "$BASE" ] && [ -d "$BASE" ]; then
  echo "== base"
  (cd "$BASE" && PYTHONPATH=/tmp/site:$PWD timeout 60 python3 scripts/case_bench.py float32 $I) > "$O/bench-base.txt" 2>&1
  tail -9 "$O/bench-base.txt"
fi
bench new
echo "== switches, interleaved in one process (3 rounds, median; einc TFLOP/s)"
cat > /tmp/skinny_ab.py <<'EOF'
import os, sys, torch, einc
from einc import api
from einc.bench_cuda import _events_median, _rotations, case_geometry
from einc.codegen.cuda.emit import emit_step
V = {"default": {}, "MVEC=0": {"EINC_SKINNY_MVEC": "0"}, "KFAST_RM=1": {"EINC_SKINNY_KFAST_RM": "1"},
     "S=3": {"EINC_SKINNY_S": "3"}, "TAIL=0": {"EINC_SKINNY_TAIL": "0"}, "X2=0": {"EINC_SKINNY_X2": "0"}}
KEYS = {k for e in V.values() for k in e}
print(f"{'einsum':<18}" + "".join(f"{v:>11}" for v in V))
for arg in sys.argv[1:]:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    geo = case_geometry(subs, sizes, 4)
    sets = _rotations(torch, lambda: [torch.randn(s, device="cuda") for s in geo["shapes"]], geo["bytes"])
    ref = torch.einsum(subs, *sets[0]).double()
    t, names = {v: [] for v in V}, {}
    for rnd in range(3):
        for v, env in V.items():
            for k in KEYS:
                os.environ.pop(k, None)
            os.environ.update(env)
            api._EXECUTABLES.clear()
            got = einc.einsum(subs, *sets[0])
            if rnd == 0:
                p = api.plan_for(subs, geo["shapes"], "float32", backend="cuda")
                names[v] = emit_step(p, p.steps[-1]).name[-8:]
                assert torch.allclose(got.double(), ref, rtol=1e-4, atol=1e-4 * float(ref.abs().max())), (subs, v)
            t[v].append(_events_median(torch, lambda i: einc.einsum(subs, *sets[i % len(sets)]), 10, 3)[0])
    print(f"{subs:<18}" + "".join(f"{geo['flops'] / sorted(t[v])[1] / 1e12:>11.2f}" for v in V)
          + "  kernels: " + " ".join(names[v] for v in V), flush=True)
EOF
timeout 110 python3 /tmp/skinny_ab.py $I > "$O/ab.txt" 2>&1; tail -10 "$O/ab.txt"
echo "== racecheck"
cat > /tmp/skinny_race.py <<'EOF'
import numpy as np, torch, einc
from einc import api
from einc.codegen.cuda import emit as cuda_emit, emit_skinny
emit_skinny.MIN_ROWS = 1
CASES = [("akb,jk->jba", [(40, 9, 70), (24, 9)], 132), ("akb,jk->jba", [(64, 40, 200), (24, 40)], 13),
         ("akdbc,jk->cjbda", [(5, 7, 3, 4, 48), (24, 7)], 4), ("cabk,kj->cjba", [(6, 20, 7, 9), (9, 24)], 132),
         ("ki,kj->ij", [(13, 1100), (13, 24)], 1), ("abk,kj->bja", [(37, 20, 19), (19, 24)], 132)]
for subs, shapes, sms in CASES:
    cuda_emit.SM_COUNT = sms
    api._EXECUTABLES.clear()
    ops = [torch.randn(*s, device="cuda") for s in shapes]
    got = einc.einsum(subs, *ops, strategy="gett")
    ref = torch.einsum(subs, *[o.double() for o in ops])
    print(subs, shapes, sms, "ok" if torch.allclose(got.double(), ref, rtol=1e-4, atol=1e-4) else "MISMATCH")
EOF
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 python3 /tmp/skinny_race.py > "$O/racecheck.txt" 2>&1
echo "rc=$?"; tail -9 "$O/racecheck.txt"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum
for c in "abk,kj->bja:a=384,b=376,j=24,k=384" "akb,jk->jba:a=384,b=384,j=24,k=384"; do
  echo "=== ncu $c"
  timeout 45 ncu --clock-control none -k regex:einc_skinny --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/one_einsum.py "$c" > "$O/ncu.txt" 2>&1
  grep -E "duration|pct|registers|grid_size|stalled|wavefronts|conflicts|inst_executed" "$O/ncu.txt" \
    | sed -e 's/  */ /g' -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//'
done
echo "== summary (einc TFLOP/s per variant)"
for f in "$O"/bench-*.txt; do
  printf '%-10s' "$(basename "$f" .txt | sed 's/bench-//')"
  awk 'NR > 1 && NF >= 8 {printf " %6.2f", $5} END {print ""}' "$f"
done
