#!/usr/bin/env bash
# Session 16, call a: smallmn's flat split (one part per SM, 44-45 slices each) against the cut
# (243 batch indices, 111 SMs with two): GPU tests of test_smallmn, memcheck, the 72^5 row
# alternated, ncu kernel times of both.   (bash scripts/device_session16a.sh)
set -u
source scripts/device_env.sh
T0=$SECONDS
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_smallmn.py 2>&1 | tail -3
echo "== memcheck ($((SECONDS-T0))s)"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 python3 scripts/one_einsum.py "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | tail -3
echo "== 72^5 A/B ($((SECONDS-T0))s)"
for f in 1 0 1 0; do EINC_SMALLMN_FLAT=$f timeout 60 python3 scripts/smallmn_ab.py; done
for f in 1 0; do
  echo "== ncu flat=$f ($((SECONDS-T0))s)"
  EINC_SMALLMN_FLAT=$f timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 4 --metrics gpu__time_duration.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    python3 scripts/one_einsum.py "abcd,dbea->ec:a=72,b=72,c=72,d=72,e=72" 2>&1 | grep -E "^  [a-z_]+|duration|pct" | sed 's/  */ /g' | cut -c1-120
done
echo "done $((SECONDS-T0))s"
