#!/usr/bin/env bash
# Sixty-eighth session, call 2 (~8 min, no carry): queue 0-s67 (3), latent chunk 0 decoded while
# the bf16 rope's products run (exp_s67_rope_chunk0_early.patch) against the tree, on the rope
# format: the A/B of run_patch.sh over the 64-row shapes (H128 q1 / q2, H16 q4) and three 16 /
# 32-row ones, then B's rope tests (every *Rope* registration but mma16's: plain, wgmma forced,
# 16 / 32 / 64 rows forced) instead of the whole suite; before them, s68_small_timing.sh on A
# (the tree): queue 0-s67 (2). Prediction (s67): 0.97-0.99x at 64 rows,
# 1.00 at 16. Logs in $OUT/run_patch.tgz (after_ab.log: the rope tests).
set -u
cd "$(dirname "$0")/../../.." || exit 1
MLA_AB_FORMATS=fp8_e4m3fn_bf16_rope \
MLA_AB_FILTER='bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs128/kv4096/h16/q[24]/|bs256/kv8192/h16/q1/|bs32/kv8192/h16/q1/' \
MLA_AB_TIMEOUT=200 MLA_NO_SUITE=1 \
MLA_AFTER_AB='cd "$MLA_BUILD_B" && timeout 150 ctest -R Rope -E stage1_mma16 -j 14 --timeout 120; grep -h "^\[ margin \] fp8_e4m3fn " Testing/Temporary/LastTest.log | sort -k16 -g | tail -3' \
  timeout 580 bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_s67_rope_chunk0_early.patch
