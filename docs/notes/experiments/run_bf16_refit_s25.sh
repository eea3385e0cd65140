#!/usr/bin/env bash
# Prepared in the twenty-fifth session, not run: the bf16 cost table after the solo consumers.
# A = the tree, B = exp_bf16_table_s25.patch (planner_choice_diff --bf16's NEW table: wgmma's
# fixed cost 2.0, 32 rows 2.5 us a tile, fp8's split costs), bf16 only, on a seeded sample of
# the 211 grid shapes it moves (bf16_refit_s25_shapes.txt) and the eight competition shapes
# (none of which moves: their times give the bf16 competition geomean, target <= 66 us).
# Planner only, so no suite (validate the kept side after). ~150 s on the H200.
set -u
D=docs/notes/experiments
C='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=bf16 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$(cat $D/bf16_refit_s25_shapes.txt),$C" \
  MLA_AB_TIMEOUT=240 timeout 300 bash $D/run_patch.sh $D/exp_bf16_table_s25.patch
