#!/usr/bin/env bash
# Thirty-seventh session, call 2 (~170 s): three timing probes (wrong results by design) on
# where the 64-row round's idle tensor time goes (call 1's timeline): B = the FP8_MMA 64-row
# producer copies only the first kStages tiles (probe_s37_no_copy_ss), C = no MUFU.EX2 in
# write_pt (probe_s37_no_exp), D = consumer 1 does not wait for consumer 0's maxima
# (probe_s37_no_max_wait).
set -u
S=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4,bs128/kv4096/h16/q2,bs256/kv8192/h16/q1
E=docs/notes/experiments
MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma,fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=300 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/probe_s37_no_copy_ss.patch $E/probe_s37_no_exp.patch \
  $E/probe_s37_no_max_wait.patch
