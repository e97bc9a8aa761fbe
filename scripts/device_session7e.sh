#!/usr/bin/env bash
# Session 7, call 5: where memcheck's 34 errors on scripts/ws_cases.py come from (every
# wgmma tile gave the same count): the full report of one run, and a torch-only baseline;
# the split-K candidates A/B.
set -u
source scripts/device_env.sh
compute-sanitizer --tool memcheck python3 scripts/ws_cases.py wgmma128x128s3 > $OUT/memcheck_s3.txt 2>&1
grep -c "=========" $OUT/memcheck_s3.txt
grep -m3 -B2 -A12 "Program hit\|Invalid\|error" $OUT/memcheck_s3.txt | head -60
cat > /tmp/torch_only.py <<'PY'
import torch
a = torch.randn(300, 400, device="cuda").half(); b = torch.randn(400, 136, device="cuda").half()
print((a.float() @ b.float()).abs().max().item())
PY
compute-sanitizer --tool memcheck python3 /tmp/torch_only.py 2>&1 | tail -2
compute-sanitizer --tool racecheck python3 scripts/ws_cases.py wgmma128x128s3 2>&1 | tail -2
# split-K up to 256 slices across modes (default) against the old 64 (EINC_SPLIT_K_MAX=64)
C1='lki,kjl->ji:i=384,j=376,k=376,l=384'
C2='lik,jkl->ji:i=384,j=376,k=384,l=384'
for dt in float32 bfloat16; do
  python3 scripts/case_bench.py $dt "$C1" "$C2" | tail -2
  EINC_SPLIT_K_MAX=64 python3 scripts/case_bench.py $dt "$C1" "$C2" | tail -2
done
