#!/usr/bin/env bash
# Thirty-fifth session, call 3 (~560 s). Call 2: own-page rows on pages of 1-8 tokens paid for
# fp8 at 32 rows (0.978 / 0.985 on 1 / 4), bf16 at 16 (0.926) and 32 rows (0.97); e4m3 scores at
# 32 rows 0.977 but 1.034 in 8-tile CTAs; runs for fp8 at 32 rows 0.977 / 0.950 on 16- / 64-token
# pages (contiguous 1.02: dropped); e4m3 scores' runs at 32 rows 0.947 on 64-token pages; runs for
# bf16 at 16 rows 0.97 on 16-token pages but its producer spills 4 bytes. B =
# exp_own_pages_16_32_b.patch, the kept rules (bf16 at 16 rows: own-page rows on 16-token pages
# too, no spill); C = exp_own_pages_16_32_c.patch (bf16 at 16 rows: runs with the look-ahead on
# pages of a multiple of 16, 4 bytes spilled). Predicted: B as call 2 on its shapes, bf16 16 rows
# on 16-token pages 0.96-0.98 in both B and C; short CTAs (bs32 kv1024) 0.99-1.01. Smoke on B
# (forced to wgmma): GpuRows16And32, GpuRows64; then B's whole suite.
set -u
S=bs128/kv4096/h16/q2/page1,bs128/kv4096/h16/q2/page16,bs128/kv4096/h16/q2/page64
S=$S,bs32/kv2048/h16/q2/page64,bs32/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page16
S=$S,bs32/kv1024/h16/q1/page16,bs32/kv1024/h16/q1/page1
MLA_SMOKE='GpuRows16And32.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn,bf16,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=230 \
  bash docs/notes/experiments/run_patch.sh \
  docs/notes/experiments/exp_own_pages_16_32_b.patch docs/notes/experiments/exp_own_pages_16_32_c.patch
