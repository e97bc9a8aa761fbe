#!/usr/bin/env bash
# SIMT gett with K-fast operands (einc issue 4): vector runs of k (EINC_GETT_KVEC, default on)
# against the old 4-byte cp.async per element (EINC_GETT_KVEC=0), and the lane-pair mapping
# of the fragment reads (EINC_GETT_PAIRS=1, default off): ncu shared-memory wavefronts and
# bank conflicts per gett launch, case_bench beside torch.einsum, small k-fast cases against
# numpy (plain, racecheck, memcheck), the gett GPU tests. Sections are ordered by what
# matters if the call runs out of time; long output goes to $OUT, a short table to stdout.
# (bash scripts/device_gett.sh)
set -u
source scripts/device_env.sh
mkdir -p "$OUT"
T0=$SECONDS
cat > /tmp/gett_once.py <<'EOF'
"""Each case once through einc (ncu profiles its gett launches); case -> gett kernel names on stderr."""
import sys
import torch
import einc
from einc.codegen.cuda.emit import emit_step
for arg in sys.argv[1:]:
    subs, sz = arg.split(":")
    sizes = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in sz.split(",")}
    shapes = [tuple(sizes[c] for c in t) for t in subs.split("->")[0].split(",")]
    p = einc.api.plan_for(subs, shapes, "float32", backend="cuda")
    names = [emit_step(p, s).name for s in p.steps]
    print("CASE", subs, " ".join(n for n in names if n.startswith("einc_gett")), file=sys.stderr)
    ops = [torch.randn(*s, device="cuda") for s in shapes]
    einc.einsum(subs, *ops)
    torch.cuda.synchronize()
EOF
cat > /tmp/ncu_table.py <<'EOF'
"""ncu --csv (stdin file) + the CASE lines -> one short row per gett launch."""
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
cases = {}
for l in open(sys.argv[2]):
    if l.startswith("CASE "):
        _, subs, *names = l.split()
        for n in names:
            cases.setdefault(n, subs)
hdr, body = rows[0], rows[1:]
ix = {h: i for i, h in enumerate(hdr)}
kern = {}
for r in body:
    k = (r[ix["ID"]], r[ix["Kernel Name"]], r[ix["Grid Size"]])
    v = r[ix["Metric Value"]].replace(",", "")
    kern.setdefault(k, {})[r[ix["Metric Name"]]] = v
short = lambda m: m.replace("l1tex__data_bank_conflicts_pipe_lsu_mem_shared", "conf").replace(
    "l1tex__data_pipe_lsu_wavefronts_mem_shared", "wf").replace(".sum", "")
cols = ["gpu__time_duration.sum", "smsp__inst_executed.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
        "l1tex__throughput.avg.pct_of_peak_sustained_active", "launch__registers_per_thread"]
print(f"{'case':<20}{'grid':<14}" + "".join(f"{short(c)[:12]:>13}" for c in cols))
for (i, name, grid), m in kern.items():
    f = lambda c: m.get(c, "-")
    val = lambda c: (f"{float(f(c)) / 1e6:.2f}M" if f(c) not in ("-", "") and float(f(c)) > 1e5 and "pct" not in c
                     and "time" not in c else f(c))
    print(f"{cases.get(name, name[:18]):<20}{grid[:13]:<14}" + "".join(f"{val(c):>13}" for c in cols))
EOF
# the metrics this ncu knows (an unknown one fails the whole run)
WANT="gpu__time_duration.sum smsp__inst_executed.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum l1tex__throughput.avg.pct_of_peak_sustained_active
launch__registers_per_thread"
timeout 20 ncu --query-metrics > "$OUT/ncu-metrics.txt" 2>&1
M=""
for w in $WANT; do
  base=${w%%.*}
  if grep -qE "^$base[[:space:]]" "$OUT/ncu-metrics.txt" || [ "$base" = "launch__registers_per_thread" ]; then M="$M,$w"; fi
done
M=${M#,}
if [ $(echo $M | tr ',' '\n' | wc -l) -lt 6 ]; then  # no usable list: the ones session 4 used, + by-op
  M=gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
fi
echo "metrics: $(echo $M | tr ',' '\n' | wc -l) of 10 known ($((SECONDS-T0))s)"
NCU_CASES="lik,jkl->ji:i=384,j=376,k=384,l=384 ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84
amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 ij,jk->ik:i=4096,j=4096,k=4096"
prof() {  # label, env...
  local label=$1; shift
  env "$@" timeout ${NCU_S:-35} ncu --clock-control none --csv -k regex:einc_gett --metrics "$M" \
    python3 /tmp/gett_once.py $NCU_CASES > "$OUT/ncu-$label.csv" 2> "$OUT/ncu-$label.err"
  echo "== ncu $label rc=$? ($((SECONDS-T0))s)"
  python3 /tmp/ncu_table.py "$OUT/ncu-$label.csv" "$OUT/ncu-$label.err" 2>&1 | cut -c1-200
}
prof vec EINC_GETT_KVEC=1
prof old EINC_GETT_KVEC=0

CASES="lik,jkl->ji:i=384,j=376,k=384,l=384 ap,srqp->srqa:a=96,p=96,q=84,r=84,s=84
amji,cbkm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24 bmji,cakm->kjicba:a=24,b=20,c=20,i=24,j=20,k=20,m=24
ij,jk->ik:i=4096,j=4096,k=4096 ki,jk->ji:i=7248,j=7240,k=7248 lki,kjl->ji:i=384,j=376,k=376,l=384
lki,jl->kji:i=384,j=376,k=376,l=384 kmli,ljm->kji:i=96,j=84,k=84,l=84,m=96
njmi,mknl->lkji:i=96,j=84,k=84,l=96,m=84,n=84 bq,srqa->srba:a=96,b=84,q=96,r=84,s=84
kli,lj->kji:i=384,j=384,k=376,l=376"
bench() {  # label, seconds, env...
  local label=$1 secs=$2; shift 2
  env "$@" timeout $secs python3 scripts/case_bench.py float32 $CASES > "$OUT/bench-$label.txt" 2>&1
  echo "== bench $label rc=$? ($((SECONDS-T0))s)"
  awk 'NR > 1 {printf "%-20s %8s %8s %7s %6s %s %s\n", substr($1,1,20), $3, $4, $5, $7, $8, $9}' "$OUT/bench-$label.txt" | head -14
}
bench vec 50 EINC_GETT_KVEC=1
echo "== k-fast vector cases ($((SECONDS-T0))s)"
timeout 40 python3 scripts/gett_kvec_cases.py --torch 2>&1 | tail -4
for tool in racecheck memcheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 python3 scripts/gett_kvec_cases.py > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? ($((SECONDS-T0))s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|einsums' "$OUT/$tool.txt" | tr '\n' ' ' | cut -c1-150)"
done

echo "== gett GPU tests ($((SECONDS-T0))s)"
timeout 40 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_cuda_backend.py -k gett > "$OUT/gpu-tests.txt" 2>&1
echo "rc=$? ($((SECONDS-T0))s)"; grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.txt" | cut -c1-200 | head -8; tail -1 "$OUT/gpu-tests.txt"
bench old 40 EINC_GETT_KVEC=0

NCU_S=30 NCU_CASES="lik,jkl->ji:i=384,j=376,k=384,l=384 ij,jk->ik:i=4096,j=4096,k=4096" prof pairs EINC_GETT_KVEC=1 EINC_GETT_PAIRS=1
echo "done ($((SECONDS-T0))s)"
