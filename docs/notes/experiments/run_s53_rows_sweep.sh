#!/usr/bin/env bash
# Fifty-third session, one device call (~260 s, no carry): a rows x splits grid for the
# planner's fp8 wgmma cost table (src/plan.cpp stage1_cost). The s52 sweep (docs/perf/
# h100_2026-12-06_s53/offgrid_sweep) found 32-row plans faster than the table's 64-row choice
# on three off-grid shapes (bs50 kv3500 H32 q2 73.8 against 81.1 us, bs100 kv1500 H32 q3 110.9
# against 118.9, bs8 kv8192 H64 q2 52.2 against 55.8): long 32-row CTAs ran ~1.2-1.5 us a tile,
# the table says 1.75. Before a re-fit moves ~400-580 of the 4,320 grid shapes
# (planner_choice_diff), time the candidates: 20 shapes (the H128 targets, shapes the re-fit
# would move, the off-grid misses) at rows 16 / 32 / 64 x splits 1 / 2 / 4 / 8 / 16, the plan's
# choice and each rows' own split choice. Logs: $OUT/offgrid_sweep.tgz. MLA_SWEEP_SHAPES replaces
# the shapes (run_s54_rows64_sweep.sh).
S=bs32/kv8192/h128/q1,bs64/kv4096/h128/q1,bs4/kv4096/h64/q1,bs4/kv8192/h128/q2
S=$S,bs32/kv4096/h64/q1,bs64/kv4096/h64/q1,bs64/kv4096/h32/q2,bs128/kv4096/h32/q3
S=$S,bs32/kv1024/h32/q1,bs4/kv8192/h16/q2,bs32/kv4096/h16/q3,bs256/kv1024/h32/q3
S=$S,bs128/kv4096/h16/q4,bs128/kv4096/h16/q2,bs16/kv4096/h64/q2,bs8/kv2048/h128/q1
S=$S,bs40/kv3000/h128/q1,bs50/kv3500/h32/q2,bs100/kv1500/h32/q3,bs8/kv8192/h64/q2
sides="auto r16 r32 r64"
for r in 16 32 64; do for s in 1 2 4 8 16; do sides="$sides r${r}s$s"; done; done
MLA_SWEEP_SHAPES=${MLA_SWEEP_SHAPES:-$S} MLA_SWEEP_SIDES=$sides \
  exec bash docs/notes/experiments/run_s52_offgrid_sweep.sh
