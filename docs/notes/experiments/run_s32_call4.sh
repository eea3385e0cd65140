#!/usr/bin/env bash
# Thirty-second session, call 4 (~280 s). exp_warp_run_bf16_32.patch: the runs of 16 rows a
# warp with each warp's page a tile ahead (late), kept for the 64-row bf16-Q kernels in call 3,
# for bf16 caches' 32-row kernel too (pages of a multiple of 16 tokens; it took the shuffled loop
# with the early look-ahead on pages of 16 and 32, the 4-row-step loop on 64). A/B on bf16:
# H128 q1 bs64 kv4096 (32 rows) over pages of 16, 32, 64 and contiguous, H16 q2 bs128 kv4096 on
# 16-token pages (32 rows), bs32 kv8192 H16 on 16-token pages (16 rows: unchanged, control).
# Smoke (going on if it fails: the new bf16 cases assume 32 rows): PagedSplitCtas
# and the paged bf16 cases; B's suite. Prediction: A's 16-token pages ~5-10 % over contiguous as
# fp8's 64 rows were; B 0.93-0.97 there, 0.98-1.00 on 64-token pages, contiguous 1.00.
set -u
D=docs/notes/experiments
S=bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page32,bs64/kv4096/h128/q1/page64
S=$S,bs64/kv4096/h128/q1,bs128/kv4096/h16/q2/page16,bs32/kv8192/h16/q1/page16
MLA_SMOKE='GpuRows64.PagedSplitCtas:*/GpuPathsFormat.ShuffledPagesWithSentinelListTails/bf16*:*/GpuPathsFormat.LargeShuffledPagesOfLongElements/bf16*' \
  MLA_SMOKE_CONTINUE=1 MLA_SMOKE_TIMEOUT=90 MLA_AB_FORMATS=bf16 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  timeout 570 bash $D/run_patch.sh $D/exp_warp_run_bf16_32.patch
