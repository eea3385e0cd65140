#!/usr/bin/env bash
# Thirty-seventh session, call 6 (~60 s): the timeline of the settled-maxima seesaw
# (exp_timeline_s37_settled.patch = exp_s37_settled + the s36 stamps; event 3 is now the
# vote, 7 the slow path's first barrier) on FP8_MMA and bf16 Q, H128 q1 bs64 kv4096.
set -u
OUT=${OUT:-/tmp/out}
E=docs/notes/experiments
TL=docs/notes/experiments/exp_timeline_s37_settled.patch
OUT=$OUT/mma MLA_TL_TIMELINE=$TL MLA_TL_FORMAT=fp8_e4m3fn_qfp8_mma timeout 200 \
  bash $E/run_timeline.sh bs64/kv4096/h128/q1
OUT=$OUT/bf16q MLA_TL_TIMELINE=$TL MLA_TL_FORMAT=fp8_e4m3fn timeout 200 \
  bash $E/run_timeline.sh bs64/kv4096/h128/q1
