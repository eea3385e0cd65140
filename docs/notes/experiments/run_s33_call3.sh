#!/usr/bin/env bash
# Thirty-third session, call 3 (~350 s). Call 2's staged page numbers lost 1.065-1.078x (each
# row's address a chain of 64-bit products in the producer's 24 registers). Now lane l < 16
# stores row l's latent and rope addresses (16 bytes) into shared memory at the tile's start and
# each row's copy follows one shared load: B = exp_page_runs_rows.patch (bf16 scores), C =
# exp_page_runs_rows_fp8mma.patch (e4m3 scores too). Same shapes, formats, smoke and B's suite as
# call 2. Prediction: pages of 1-8 tokens 0.91-0.94 (H128 q1 ~159 -> 146-150 us; FP8_MMA 126 ->
# ~118-120), controls 1.00 +- 0.01.
set -u
D=docs/notes/experiments
S=bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page8
S=$S,bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1,bs128/kv4096/h16/q4/page1
MLA_SMOKE='GpuRows64.*:*/GpuPathsFormat.ShuffledPagesWithSentinelListTails/fp8*:*/GpuPathsFormat.LargeShuffledPagesOfLongElements/fp8*' \
  MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=260 \
  timeout 580 bash $D/run_patch.sh $D/exp_page_runs_rows.patch \
  $D/exp_page_runs_rows_fp8mma.patch
