#!/usr/bin/env bash
# Session 7, call 5: where memcheck's 34 errors on scripts/ws_cases.py come from (every
# wgmma tile gave the same count): the full report of one run, and a torch-only baseline.
set -u
source scripts/device_env.sh
compute-sanitizer --tool memcheck python3 scripts/ws_cases.py wgmma128x128s3 > $OUT/memcheck_s3.txt 2>&1
grep -c "=========" $OUT/memcheck_s3.txt
grep -m3 -B2 -A12 "Program hit\|Invalid\|error" $OUT/memcheck_s3.txt | head -60
python3 - > /tmp/t.py <<'PY'
PY
cat > /tmp/torch_only.py <<'PY'
import torch
a = torch.randn(300, 400, device="cuda").half(); b = torch.randn(400, 136, device="cuda").half()
print((a.float() @ b.float()).abs().max().item())
PY
compute-sanitizer --tool memcheck python3 /tmp/torch_only.py 2>&1 | tail -2
compute-sanitizer --tool racecheck python3 scripts/ws_cases.py wgmma128x128s3 2>&1 | tail -2
