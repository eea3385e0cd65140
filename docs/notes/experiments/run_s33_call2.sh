#!/usr/bin/env bash
# Thirty-third session, call 2 (~450 s). The 64-row fp8 kernel on pages of 1, 2, 4 and 8 tokens
# (the shuffled loop, ~13 % over contiguous) as runs of 16 rows a warp whose page numbers the
# producer stages in shared memory a tile ahead, read 4 at a time by one 16-byte load
# (copy_tile_rows_page_run): B = exp_page_runs_staged.patch (bf16 scores: bf16 Q and fp8 Q),
# C = exp_page_runs_staged_fp8mma.patch (also e4m3 scores). A/B/C on H128 q1 bs64 kv4096 over
# pages of 1, 4, 8, 16 (control) and contiguous (control), H16 q4 bs128 kv4096 on 1-token pages;
# e4m3fn, fp8 Q, FP8_MMA; smoke of GpuRows64 (new cases: pages of 1, 2, 4) and the paged fp8
# cases; B's suite. Prediction: pages of 1-8 tokens 0.90-0.93 (H128 q1 ~160 -> ~146 us, between
# contiguous 141 and the 16-token runs 144), controls 1.00 +- 0.01.
set -u
D=docs/notes/experiments
S=bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page8
S=$S,bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1,bs128/kv4096/h16/q4/page1
MLA_SMOKE='GpuRows64.*:*/GpuPathsFormat.ShuffledPagesWithSentinelListTails/fp8*:*/GpuPathsFormat.LargeShuffledPagesOfLongElements/fp8*' \
  MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=260 \
  timeout 580 bash $D/run_patch.sh $D/exp_page_runs_staged.patch \
  $D/exp_page_runs_staged_fp8mma.patch
