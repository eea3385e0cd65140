#!/usr/bin/env bash
# Thirty-fifth session, call 2 (~300 s). Call 1 (run_s35_paged_probe.sh): fp8 at 32 rows pays
# ~7 % on 1- and 16-token pages (bs128 kv4096 H16 q2 105.5 -> 113.1 / 112.8 us), bf16 at 16 rows
# ~10 % on 1-token pages (94.0 -> 103.6) and 5 % on 16, bf16 at 32 rows 5-9 % on 1-token pages;
# fp8 at 16 rows < 1 %. B = exp_own_pages_32_16.patch: rows from their own pages (8 threads a
# row) on pages of 1-8 tokens for fp8 at 32 rows (both score kinds) and bf16 at 16 / 32 rows;
# runs of 16 rows a warp with the page look-ahead on pages of a multiple of 16 for fp8 at 32
# rows (bf16 scores). C = exp_own_pages_32_16_runs.patch: B + the runs for bf16 at 16 rows
# (its producer spills 4 bytes) + fp8 32-row runs (no look-ahead) on contiguous caches and
# pages of a multiple of 64. Predicted: B 0.93-0.95 on the paged 32-row fp8 shapes, 0.90-0.93
# on bf16 1-token pages; C's contiguous fp8 32 rows 0.98-1.01. Smoke: GpuRows16And32 on B
# (forced to wgmma; its routes printed).
set -u
S=bs128/kv4096/h16/q2,bs128/kv4096/h16/q2/page1,bs128/kv4096/h16/q2/page4
S=$S,bs128/kv4096/h16/q2/page16,bs128/kv4096/h16/q2/page64,bs32/kv8192/h16/q1
S=$S,bs32/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page16,bs32/kv2048/h16/q2/page1
MLA_SMOKE='GpuRows16And32.*' MLA_SMOKE_TIMEOUT=150 MLA_SMOKE_CONTINUE=1 \
  MLA_AB_FORMATS=fp8_e4m3fn,bf16,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=320 \
  MLA_NO_SUITE=1 bash docs/notes/experiments/run_patch.sh \
  docs/notes/experiments/exp_own_pages_32_16.patch docs/notes/experiments/exp_own_pages_32_16_runs.patch
