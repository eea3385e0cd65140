#!/usr/bin/env bash
# Prepared in the fifty-third session (one device call, ~500 s on the H100: it timed out at 480 s
# in the fifty-fourth, logs lost; give it a 560 s limit, no carry): the
# 64-row figures of the fp8 cost table (src/plan.cpp: 2.55 us a tile, 12 us a wave of split
# CTAs) from a sweep of their own. Long 64-row CTAs measure ~2.1-2.2 us a tile on the H100
# (bs40 kv3000 H128 q1: 104.3 us for 47 tiles) and ~2.05 on the H200 (bs64 kv4096 H128 q1: 133.2
# for 64), but 2.55 was also right on the fifty-third session's 22 shapes, so the table kept it.
# 20 shapes 0.7.33 plans at 64 rows (planner_choice_diff LIST=1: 1,610 of 4,320), from small
# batches of long caches (many splits) to large batches of short ones, at rows 16 / 32 / 64 x
# splits 1 / 2 / 4 / 8 / 16. Then: cost_table_fit_s53.py with its DATA extended to this
# sweep's folder, --search, and run_s53_moved_ab.sh's form for the shapes a new table moves.
S=bs3/kv65536/h128/q1,bs4/kv32768/h128/q2,bs6/kv8192/h128/q2,bs8/kv16384/h128/q4
S=$S,bs12/kv1000/h128/q3,bs16/kv16384/h16/q3,bs24/kv8192/h128/q1,bs24/kv4096/h16/q3
S=$S,bs32/kv8192/h128/q4,bs48/kv2048/h64/q2,bs64/kv4096/h128/q1,bs64/kv4096/h128/q2
S=$S,bs96/kv8192/h64/q2,bs128/kv200/h32/q3,bs128/kv4096/h16/q4,bs256/kv200/h128/q3
S=$S,bs256/kv1000/h32/q4,bs512/kv64/h128/q1,bs16/kv12000/h128/q1,bs40/kv3000/h128/q1
MLA_SWEEP_SHAPES=$S exec bash docs/notes/experiments/run_s53_rows_sweep.sh
