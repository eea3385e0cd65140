#!/usr/bin/env bash
# Thirty-fourth session, call 3 (~400 s). B = exp_row_quads_64.patch: 64 rows of fp8 on pages of
# 1, 2, 4 or 8 tokens copy two rows a producer thread, each from its own page (loaded a tile
# ahead), 9 copies at immediate offsets from one address a row, no shuffles (call 2's ncu: on
# 4-token pages in order the producer spent 2.4x the samples of a contiguous cache in its copy
# loop, long-scoreboard stalls on its address registers, and the consumers waited on full stages
# 5.5 % of samples against 2.1 %). Predicted: H128 q1 on 1-8-token pages 0.90-0.92 (160 -> ~145
# us, the 16-token pages' level), e4m3 scores 0.93-0.95 (127.6 -> ~120), controls (contiguous,
# 16-token pages) 1.00. Smoke: GpuRows64 forced to wgmma; then B's whole suite.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page2
S=$S,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page8,bs64/kv4096/h128/q1/page16
S=$S,bs128/kv4096/h16/q4/page1,bs128/kv4096/h16/q4/page4,bs32/kv8192/h128/q1/page1
MLA_SMOKE='GpuRows64.*' MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=220 \
  bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_row_quads_64.patch
