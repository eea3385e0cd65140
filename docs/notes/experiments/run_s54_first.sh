#!/usr/bin/env bash
# Prepared in the fifty-third session: the next session's first call, one start for two jobs
# (~500 s; carry ["build-peers"]; best on the H200, whose figures the targets are). First
# run_validate.sh with the off-grid comparison (suite, checked mla_bench over the three fp8
# formats, FlashMLA beside on the off-grid shapes and the grid; 0.7.31-0.7.33 never ran on an
# H200), ending by 330 s; then, while 230 s are left of 580, run_s54_rows64_sweep.sh (the
# 64-row figures' sweep). Logs: $OUT/validate.tgz, $OUT/offgrid_sweep.tgz.
MLA_END=330 MLA_VALIDATE_OFFGRID=1 bash docs/notes/experiments/run_validate.sh
[ $SECONDS -lt 350 ] || { echo "no time for the 64-row sweep ($SECONDS s)"; exit 0; }
timeout $((580 - SECONDS)) bash docs/notes/experiments/run_s54_rows64_sweep.sh 2>&1 | tail -25
echo "total $SECONDS s"
