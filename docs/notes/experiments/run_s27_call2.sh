#!/usr/bin/env bash
# Twenty-seventh session, second device call. A = the tree; B = exp_consecutive_rows.patch (the
# wgmma producer finds a tile's rows from its warp's first row where the rows lie in
# consecutive slots: contiguous caches and pages of a multiple of 64 tokens; ncu of the long-CTA
# kernel showed its shuffled row loop issuing ~90 % of the time while the consumers waited on
# full stages a third of theirs); C = B plus the long-CTA threshold at 40 tiles (the first call:
# 32-tile CTAs 0.975-1.004, 40-56 tiles 0.968-0.993). fp8 e4m3fn and bf16, the 14 default
# cases plus paged (16 / 64) and 40-48-tile shapes; smoke on the paged and long-CTA tests, then
# B's whole GPU suite (the new LargeShuffledPagesOfLongElements included). ~450 s.
set -u
D=docs/notes/experiments
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4,bs64/kv4096/h128/q1,bs1/kv65536/h16/q1,bs32/kv8192/h16/q1/page16,bs32/kv8192/h16/q1/page64,bs256/kv2560/h16/q1,bs128/kv3072/h16/q1'
MLA_SMOKE='AllFormats/GpuPathsFormat.*Pages*:GpuLongCta.*' MLA_AB_FORMATS=fp8_e4m3fn,bf16 \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=260 \
  timeout 560 bash $D/run_patch.sh $D/exp_consecutive_rows.patch \
  $D/exp_consecutive_rows_threshold40.patch
