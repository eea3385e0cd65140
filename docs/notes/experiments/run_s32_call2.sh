#!/usr/bin/env bash
# Thirty-second session, call 2 (~300 s). exp_warp_run_pages.patch: the 64-row fp8 kernels
# (e4m3fn / e4m3fnuz with bf16 Q, FP8_MMA) on pages of 16 or 32 tokens take the consecutive
# loop with runs of 16 rows a warp (warp pw: tile rows 16 pw .. 16 pw + 15, one page, one slot a
# warp and tile, one row's strides a row) instead of the shuffled loop; no per-row condition
# (what lost in the page runs of session 28 and the page walk of call 1). A/B as call 1 (pages
# of 4 and 64 and contiguous are controls: unchanged code); smoke of GpuRows64 (the new
# PagedSplitCtas: FP8_MMA on 16-token pages too) and the paged fp8 cases; B's whole suite.
# Prediction: e4m3fn 16- and 32-token pages 0.91-0.93 (158.5 -> 144-147 us, between contiguous
# 141.6 and 64-token pages 146.2), FP8_MMA 0.97-1.00, controls 1.00.
set -u
D=docs/notes/experiments
S=bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page32
S=$S,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1,bs128/kv4096/h16/q4/page16
S=$S,bs32/kv8192/h16/q1/page16
MLA_SMOKE='GpuRows64.*:*/GpuPathsFormat.ShuffledPagesWithSentinelListTails/fp8*:*/GpuPathsFormat.LargeShuffledPagesOfLongElements/fp8*' \
  MLA_SMOKE_TIMEOUT=90 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=220 \
  timeout 570 bash $D/run_patch.sh $D/exp_warp_run_pages.patch
