#!/usr/bin/env bash
# Thirty-fifth session, call 6 (~200 s): why a faster producer costs short CTAs. e4m3 scores at
# 32 rows with own-page rows (pages of 1-8) and runs (64-token pages) ran 0.95-0.98x in 64-tile
# CTAs but 1.034-1.044x in 8-tile CTAs (calls 2-3). Guess: all stages' copies issued at once
# delay the first tile (every CTA's requests queue together after the flush). Sides:
# 1 = exp_throttle_32_c.patch (the producer issues tiles 0 and 1, then waits for tile 0 to
# land), 2 = exp_throttle_32_b.patch (no wait: calls 2-3's form), 3 = exp_throttle_32_d.patch
# (waits after tile 0). Predicted if the guess holds: sides 1 and 3 <= 1.00 on the 8-tile CTAs
# and ~0.95-0.98 on the 64-tile ones. Smoke on side 1: GpuRows16And32, GpuFp8Mma (forced wgmma).
set -u
S=bs32/kv2048/h16/q2/page1,bs32/kv2048/h16/q2/page64,bs16/kv1024/h16/q2/page64
S=$S,bs128/kv4096/h16/q2/page1,bs128/kv4096/h16/q2/page64
MLA_SMOKE='GpuRows16And32.*:GpuFp8Mma.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 MLA_NO_SUITE=1 \
  bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_throttle_32_c.patch \
  docs/notes/experiments/exp_throttle_32_b.patch docs/notes/experiments/exp_throttle_32_d.patch
