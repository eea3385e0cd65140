#!/usr/bin/env bash
# Fifty-fourth session, one device call (~70 s): where the balanced kernel's time goes. Shapes
# whose gangs take whole elements (bs132 kv4096 H16 q2: one item a CTA, no cut; bs264: two
# items, no cut; bs132 H128 q1: two whole elements a gang of two) against the uniform plan, and
# bs128 (two cut items), each also without PDL. If bs132 were as slow as bs128 the kernel would
# be slower per tile; it is not (docs/notes/balanced_schedule.md, "Measured"). Logs:
# $OUT/balanced.tgz (run_s54_balanced.sh's, without its tests).
MLA_BALANCED_TESTS=0 MLA_BALANCED_TARGET=mla_bench \
  MLA_BALANCED_SIDES="uniform balanced balanced_nopdl" \
  MLA_BALANCED_CASES="bs132/kv4096/h16/q2:0 bs264/kv4096/h16/q2:0 bs128/kv4096/h16/q2:0
bs132/kv4096/h128/q1:0" exec bash docs/notes/experiments/run_s54_balanced.sh
