#!/usr/bin/env bash
# Thirty-seventh session, call 9 (~150 s): 0.7.20's settled maxima at 32 rows on shapes other
# than call 7's (short CTAs of few tiles a consumer, 32 heads): A = the tree (0.7.20), B = the
# kernels before it (rev_s37_settled.patch).
set -u
S=bs4/kv8192/h16/q2,bs32/kv2048/h16/q2,bs32/kv1024/h16/q2,bs64/kv4096/h32/q1
S=$S,bs8/kv4096/h32/q1,bs128/kv4096/h16/q2/page16
E=docs/notes/experiments
MLA_AB_FORMATS=fp8_e4m3fn,bf16 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/rev_s37_settled.patch
