#!/usr/bin/env bash
# Thirty-seventh session, call 7 (~250 s): settled maxima in the solo consumers (16-row long
# CTAs, 32 rows, bf16): B = solo only (exp_s37_settled_solo), C = solo and seesaw
# (exp_s37_settled_all). Smoke of B first (forced wgmma), over the suites that reach the solo
# consumers (long CTAs, 32 rows, bf16) and the NaN / large-logit cases.
set -u
S=bs256/kv8192/h16/q1,bs64/kv8192/h16/q1,bs128/kv4096/h16/q2,bs32/kv8192/h16/q1
S=$S,bs4/kv8192/h16/q1,bs1/kv65536/h16/q1
E=docs/notes/experiments
MLA_SMOKE='*LongCta*:*Long*:AllFormats/GpuFormatHeads.*:*Nan*:*NaN*:*Logit*:*Lse*' \
  MLA_SMOKE_TIMEOUT=200 \
  MLA_AB_FORMATS=fp8_e4m3fn,bf16,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=330 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_s37_settled_solo.patch $E/exp_s37_settled_all.patch
