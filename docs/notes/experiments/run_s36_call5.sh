#!/usr/bin/env bash
# Thirty-sixth session, call 5 (~150 s): the 128-byte-swizzle form (call 4: 0.955-0.964 on
# contiguous caches, 1.029 on 64-token pages) with the paged producer's page loads fixed: side 1
# = exp_fp8mma_ss_64_sw128_ahead.patch (the element's page list once a tile, row j + 1's page
# loaded while row j is copied; smoked: forced wgmma, GpuFp8Mma and GpuRows64), side 2 =
# exp_fp8mma_ss_64_sw128_pages.patch (the page list once a tile only), side 3 = call 4's sw128.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16
S=$S,bs64/kv4096/h128/q1/page1,bs128/kv4096/h16/q4/page64,bs32/kv8192/h128/q1/page16
E=docs/notes/experiments
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=250 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_fp8mma_ss_64_sw128_ahead.patch $E/exp_fp8mma_ss_64_sw128_pages.patch \
  $E/exp_fp8mma_ss_64_sw128.patch
