#!/usr/bin/env bash
# Session 33, call a (the first start that comes has to count): skinny_mma's TMA slices --
# their GPU tests, an interleaved A/B (TMA on / off) on five bf16 intensli cases against
# torch.einsum, memcheck on a TMA kernel; then both TCCG-24 suites (TMA on where the tests
# passed and the A/B won) and the main bench, so that the card this call got has every target.
set -u
source scripts/device_env.sh
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
EINC_SKINNY_MMA_TMA=1 timeout 90 python3 -m pytest -q -n 8 -m gpu -p no:cacheprovider tests/test_skinny_mma.py > /tmp/sk.txt 2>&1
grep -E "^(FAILED|E  )" /tmp/sk.txt | head -8; tail -1 /tmp/sk.txt
TESTS_OK=$(tail -1 /tmp/sk.txt | grep -c -E "passed" ); tail -1 /tmp/sk.txt | grep -q -E "failed|error" && TESTS_OK=0
echo "--- A/B $((SECONDS-T0))s"
ROUNDS=4 timeout 120 python3 scripts/ab_modes.py einc.codegen.cuda.emit_skinny_mma.TMA 1,0 bfloat16 \
  'akb,jk->jba:a=384,b=384,j=24,k=384' 'abk,kj->bja:a=384,b=376,j=24,k=384' \
  'dabkc,kj->cdbja:a=48,b=36,c=48,d=36,j=24,k=36' 'cabkd,kj->dcjba:a=48,b=36,c=36,d=48,j=24,k=36' \
  'akbc,jk->cjba:a=96,b=84,c=96,j=24,k=96' 2>&1 | grep -v Warn | tee /tmp/ab.txt
GAIN=$(awk '/TMA=1 /{a=$2} /TMA=0 /{s+=log(a/$2); n++} END{if(n) printf "%.4f", exp(s/n); else print 9}' /tmp/ab.txt)
echo "TMA on / off, geometric mean of times: $GAIN (tests ok: $TESTS_OK)"
echo -n "memcheck akbc TMA: "; EINC_SKINNY_MMA_TMA=1 timeout 30 compute-sanitizer --tool memcheck --report-api-errors no python3 scripts/sk_ncu_case.py 'akbc,jk->cjba:a=48,b=10,c=32,j=24,k=40' bfloat16 2>&1 | tail -1
if [ "$TESTS_OK" = 1 ] && awk "BEGIN{exit !($GAIN < 0.99)}"; then export EINC_SKINNY_MMA_TMA=1; fi
echo "--- suites (EINC_SKINNY_MMA_TMA=${EINC_SKINNY_MMA_TMA:-0}) $((SECONDS-T0))s"
mkdir -p $EINC_RESULTS_DIR
for dt in bfloat16 float32; do
  timeout 150 python3 -m einc bench --backend cuda --suite tccg24 --dtype $dt --repeat 15 --plot 2>&1 | grep -v Warn | grep -E "geometric|saved"
  f=$(ls -t $EINC_RESULTS_DIR/tccg24-cuda-*.md | head -1); grep -E "^\| [0-9]+ \|" $f | awk -F'|' '$9+0 < 1.03 || $3 ~ /intensli/ {print $3, $4, $9}'
done
echo "--- bench $((SECONDS-T0))s"
timeout 170 python3 -m einc bench --backend cuda 2>&1 | grep -v Warn | grep -E "einc /|einc [0-9]|cached|saved"
echo "--- ncu akb, TMA on / off $((SECONDS-T0))s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_write.sum,dram__bytes_read.sum
for t in 1 0; do
  echo "=== TMA=$t"
  EINC_SKINNY_MMA_TMA=$t timeout 45 ncu --clock-control none -k regex:einc_skinny --launch-skip 2 --launch-count 1 --metrics $M \
    python3 scripts/sk_ncu_case.py 'akb,jk->jba:a=384,b=384,j=24,k=384' bfloat16 2>&1 \
    | grep -E "duration|pct|registers|grid_size|stalled|bytes|sectors" | sed -e 's/  */ /g' -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//'
done
echo "done $((SECONDS-T0))s"
