#!/usr/bin/env bash
# Twenty-ninth session: the page-table look-ahead of 0.7.13 in MXFP4's shuffled producer loop
# too (B = exp_paged_ahead_mxfp4.patch: every MXFP4 kernel on a paged cache whose pages are not
# whole tiles; no spills). Prediction from fp8 (1-token pages 0.80-0.93x, 16-token 0.94-0.97x):
# smaller gains, MXFP4's tiles cost more decode time per byte so the lookups hide better.
# Smoke (paged tests, forced wgmma), A/B on MXFP4, then B's suite with the time left.
set -u
D=docs/notes/experiments
S='bs4/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page1,bs256/kv8192/h16/q1/page1,bs256/kv8192/h16/q1/page16,bs128/kv4096/h16/q2/page1,bs64/kv4096/h128/q1/page16,bs128/kv4096/h16/q4/page1,bs32/kv8192/h16/q1'
MLA_SMOKE='AllFormats/GpuPathsFormat.*Pages*:GpuRows64.*' MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_FORMATS=mxfp4 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=130 timeout 395 bash $D/run_patch.sh $D/exp_paged_ahead_mxfp4.patch
