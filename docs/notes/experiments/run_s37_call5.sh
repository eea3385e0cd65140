#!/usr/bin/env bash
# Thirty-seventh session, call 5 (~250 s): settled maxima in the seesaw (exp_s37_settled): a
# tile whose scores move no running maximum (the other consumer's tile before it moved none,
# every row's maximum is finite, no score passes the lazy bound: one bar.red.or vote) skips the
# tile maxima's exchange, the owners' step and its two named barriers; bit-identical outputs.
# Smoke (forced wgmma) over the 64-row, fp8-Q and per-format suites first, then the A/B.
set -u
S=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4,bs64/kv4096/h128/q2,bs32/kv1024/h16/q1
S=$S,bs64/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv8192/h128/q1
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*:AllFormats/GpuFormatHeads.*:*Lse*:*Nan*:*NaN*' \
  MLA_SMOKE_TIMEOUT=200 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma,fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=300 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_s37_settled.patch
