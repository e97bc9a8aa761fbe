#!/usr/bin/env bash
# Session 11, call d: what compute-sanitizer memcheck reported on the TMA GEMM in call a
# (34 errors on ij,jk->ik 4096^3 bf16): the first errors in full, the cp.async producer beside
# it, and racecheck / memcheck on the new smallmn fragments.   (bash scripts/device_session11d.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
G="ij,jk->ik:i=4096,j=4096,k=4096"
echo "== memcheck TMA"
timeout 90 compute-sanitizer --tool memcheck --print-limit 4 python3 scripts/one_einsum.py "$G" bfloat16 2>&1 | head -60 | cut -c1-220
echo "== memcheck cp.async producer"
EINC_WGMMA_TMA=0 timeout 90 compute-sanitizer --tool memcheck --print-limit 2 python3 scripts/one_einsum.py "$G" bfloat16 2>&1 | tail -4 | cut -c1-220
echo "== memcheck small TMA (ragged)"
timeout 90 compute-sanitizer --tool memcheck --print-limit 2 python3 scripts/one_einsum.py "ij,jk->ik:i=1000,j=1032,k=2056" bfloat16 2>&1 | tail -4 | cut -c1-220
echo "== torch alone"
timeout 90 compute-sanitizer --tool memcheck --print-limit 2 python3 -c "
import torch; a = torch.randn(4096, 4096, device='cuda', dtype=torch.bfloat16); (a @ a).sum().item()" 2>&1 | tail -3 | cut -c1-200
echo "== racecheck smallmn"
timeout 120 compute-sanitizer --tool racecheck --print-limit 3 python3 scripts/smallmn_sanitize_cases.py 2>&1 | tail -4 | cut -c1-200
echo "done $((SECONDS-T0))s"
