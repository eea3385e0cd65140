#!/usr/bin/env bash
# Thirty-second session, call 1 (~400 s). exp_paged_walk64.patch: the 64-row fp8 kernels
# (e4m3fn with bf16 Q and FP8_MMA) copy a paged tile with a page walk (one page number a lane
# for the tile's 64 / page_size pages, loaded a tile ahead; a shuffle at each page's first row,
# then 4-row strides) instead of the shuffled loop's two 64-bit addresses a row. A/B on
# H128 q1 bs64 kv4096 over pages of 4, 16, 32, 64 tokens and contiguous, H16 q4 bs128 kv4096 on
# 16-token pages (64 rows), bs32 kv8192 H16 q1 on 16-token pages (16 rows: unchanged kernel,
# control); smoke of the new test and the paged fp8 cases; B's whole suite.
# Prediction: 16-token pages 0.90-0.94x (158.5 -> ~145 us, the contiguous figure), 32 and 64
# 0.95-1.00, 4-token pages 0.97-1.03 (a re-seed every row), contiguous and 16 rows 1.00.
set -u
D=docs/notes/experiments
S=bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page32
S=$S,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1,bs128/kv4096/h16/q4/page16
S=$S,bs32/kv8192/h16/q1/page16
MLA_SMOKE='GpuRows64.*:*/GpuPathsFormat.ShuffledPagesWithSentinelListTails/fp8*:*/GpuPathsFormat.LargeShuffledPagesOfLongElements/fp8*' \
  MLA_SMOKE_TIMEOUT=90 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=220 \
  timeout 570 bash $D/run_patch.sh $D/exp_paged_walk64.patch
