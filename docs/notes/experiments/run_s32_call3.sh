#!/usr/bin/env bash
# Thirty-second session, call 3 (~330 s). The runs of 16 rows a warp (kept in call 2) with each
# warp's page loaded a tile ahead, and for every page size of a multiple of 16 tokens (64 and
# 128 too, which took the 4-row-step consecutive loop with a page-table load in front of each
# tile): B = exp_warp_run_ahead_late.patch (loaded after tile t's copies, as the 64-row shuffled
# loop's look-ahead), C = exp_warp_run_ahead_early.patch (before them). A/B/C on H128 q1 bs64
# kv4096 over pages of 16, 32, 64 and contiguous (control), H16 q4 bs128 kv4096 on 16-token
# pages; e4m3fn and FP8_MMA; smoke of GpuRows64 (pages of 8-64, FP8_MMA on 16 and 64) and the
# paged fp8 cases; B's suite. Prediction: e4m3fn pages 0.96-0.98 (149 / 147 -> 143-145 us, the
# contiguous 142 the bound), FP8_MMA 0.99-1.00 (already at its contiguous time), contiguous 1.00;
# early and late within 1 % of each other.
set -u
D=docs/notes/experiments
S=bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page32,bs64/kv4096/h128/q1/page64
S=$S,bs64/kv4096/h128/q1,bs128/kv4096/h16/q4/page16
MLA_SMOKE='GpuRows64.*:*/GpuPathsFormat.ShuffledPagesWithSentinelListTails/fp8*:*/GpuPathsFormat.LargeShuffledPagesOfLongElements/fp8*' \
  MLA_SMOKE_TIMEOUT=90 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=240 \
  timeout 570 bash $D/run_patch.sh $D/exp_warp_run_ahead_late.patch \
  $D/exp_warp_run_ahead_early.patch
