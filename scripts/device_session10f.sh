#!/usr/bin/env bash
# Session 10, sixth call: the bf16 ccsd ijkl plans step by step (scripts/step_breakdown.py).
set -u
source scripts/device_env.sh
timeout 200 python3 scripts/step_breakdown.py 2>&1 | cut -c1-200
