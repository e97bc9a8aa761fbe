#!/usr/bin/env bash
# compute-sanitizer over one launch of every kernel family and dtype (run on a GPU machine).
set -u
for tool in memcheck racecheck initcheck synccheck; do
  echo "== $tool"
  compute-sanitizer --tool "$tool" --error-exitcode 9 python3 scripts/cuda_sanitize_cases.py 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"
done
