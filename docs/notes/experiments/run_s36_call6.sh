#!/usr/bin/env bash
# Thirty-sixth session, call 6 (~130 s): the 128-byte-swizzle form's paged producer. Call 5:
# the page list once a tile (exp_fp8mma_ss_64_sw128_pages.patch) 0.953 contiguous but 1.024 /
# 1.051 / 1.564 on 64- / 16- / 1-token pages (a page load per row, each in front of its
# copies); row j + 1's page ahead of row j: worse (1.21-1.48). Side 1 =
# exp_fp8mma_ss_64_sw128_shfl.patch: the pages of the warp's 16 rows of tile t + 1 loaded by
# lanes 0..15 after tile t's copies (late: behind the wait on a free stage), one register a
# lane, taken by shuffle (4 registers a thread spilled 40 / 152 bytes); smoked (forced wgmma,
# GpuFp8Mma and GpuRows64). Side 2 = call 5's sw128_pages.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16
S=$S,bs64/kv4096/h128/q1/page1,bs128/kv4096/h16/q4/page1,bs32/kv8192/h128/q1/page16
S=$S,bs64/kv4096/h128/q2/page64
E=docs/notes/experiments
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=250 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_fp8mma_ss_64_sw128_shfl.patch $E/exp_fp8mma_ss_64_sw128_pages.patch
