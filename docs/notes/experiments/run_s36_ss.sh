#!/usr/bin/env bash
# Prepared in the thirty-fifth session, not run (~330 s). e4m3 scores at 64 rows with K as the A
# operand in shared memory (docs/notes/stage1_wgmma.md, "0-s35" (d)): B =
# exp_fp8mma_ss_64.patch (the stages in wgmma's K-major no-swizzle layout, written by one
# producer loop for every cache form; each tile's 18-step score chain by two descriptors, no K
# loads, one wait), C = exp_fp8mma_ss_64_early.patch (B + the next own tile's chain issued
# before the round's value products where its stage is full; the own tile's row sums kept in
# shared memory: without that the consumers spilled 38 / 156 bytes). Both compile without
# spills (ptxas, sm_90a); never run. Predicted (FP8_MMA, H128 q1 bs64 kv4096, 118 us now): B
# 0.95-1.00 (no K loads or chunk waits; V loads now 2-way bank-conflicted), C 0.85-0.95; on a
# paged cache both slower (a page-table load per row and thread, untuned). Smoke first (forced
# wgmma): GpuFp8Mma and GpuRows64 (their fp8_mma cases run this kernel on contiguous caches and
# pages of 1-128 tokens, both cache forms); MLA_SMOKE_CONTINUE is not set: a failure stops the
# call before the A/B.
set -u
S=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs64/kv4096/h128/q1/page64,bs8/kv4096/h128/q1
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 MLA_NO_SUITE=1 \
  bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_fp8mma_ss_64_early.patch \
  docs/notes/experiments/exp_fp8mma_ss_64.patch
