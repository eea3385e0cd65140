#!/usr/bin/env bash
# Prepared in the thirty-ninth session (no device then), not run (~450 s); after
# run_s40_swizzle16.sh, if its B won: every fp8 kernel with bf16 scores in swizzled stages.
#   B exp_s39_swizzle32.patch: exp_s39_swizzle16.patch plus 32 rows (wgmma_swizzled_stages: fp8
#     with bf16 scores at every row count). Registers (ptxas, thirty-ninth session): e4m3fnuz's
#     consumers fit 232 and its producer 32 (0 spills); e4m3fn's consumers need 240, so its
#     producer keeps 24 and derives its work again after the role split (16 / 28 bytes of spill,
#     the 64-row kernels have 24-28). The 32-row fp8 producer's own-page rows (pages of 1-8) and
#     page runs (multiples of 16) go: copy_tile_rows_ss, or TMA on pages of a multiple of 64.
#   C exp_s39_swizzle16.patch: the same without 32 rows, to tell the 32-row part apart.
#   Prediction: 32-row shapes 0.95-0.98 on contiguous caches and 64-token pages (the long CTAs'
#     0.94-0.97 from TMA), unknown on 1- and 16-token pages (own-page rows and runs took them
#     from 113 to 110 / 110 µs in s35; at 64 rows the ss copies cost no more than those).
# Smoke (32-row paths, forced wgmma) and the suite on B.
set -u
S=bs128/kv4096/h16/q2,bs128/kv4096/h16/q2/page1,bs128/kv4096/h16/q2/page16
S=$S,bs128/kv4096/h16/q2/page64,bs32/kv2048/h16/q2,bs64/kv4096/h32/q1,bs4/kv16384/h16/q2
S=$S,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1
E=docs/notes/experiments
MLA_SMOKE='GpuRows16And32.*:AllFormats/GpuPathsFormat.*fp8*:GpuLong.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fnuz MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  bash $E/run_patch.sh $E/exp_s39_swizzle32.patch $E/exp_s39_swizzle16.patch
