#!/usr/bin/env bash
# Twenty-seventh session, fourth device call: the planner's e4m3fn 64-row tile time 2.55 ->
# 2.36 us (exp_rows64_tile_236.patch; the consecutive-slot producer made 64-row CTAs ~0.925x).
# planner_choice_diff (LIST=1, both tables): 75 of 4,320 grid shapes move, most from 32 rows to
# 64 with more splits; every fifth of them timed here, plus two unmoved 64-row controls.
# Planner only (timing; the kernels are the validated ones). ~200 s.
set -u
D=docs/notes/experiments
S='bs1/kv131072/h64/q1,bs3/kv32768/h64/q1,bs4/kv65536/h32/q3,bs6/kv32768/h32/q3,bs8/kv32768/h32/q3,bs12/kv16384/h32/q3,bs16/kv3000/h128/q1,bs16/kv3000/h32/q4,bs24/kv4096/h64/q3,bs24/kv8192/h64/q4,bs32/kv4096/h128/q3,bs48/kv3000/h32/q2,bs48/kv3000/h16/q4,bs96/kv4096/h128/q1,bs96/kv4096/h32/q4,bs64/kv4096/h128/q1,bs128/kv4096/h16/q4'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  timeout 280 bash $D/run_patch.sh $D/exp_rows64_tile_236.patch
