#!/usr/bin/env bash
# Thirty-sixth session, call 7 (~120 s): the paged producer of the 128-byte-swizzle form without
# a division a row: lanes 0..15 of a producer warp load the next tile's page of one row each and
# keep its slot less its token ((page - token / page size) x page size), so a row's slot is its
# token plus a shuffled offset (exp_fp8mma_ss_64_sw128_delta.patch; call 6's shfl: 0.959
# contiguous, 1.022 / 1.029 / 1.077 on 64- / 16- / 1-token pages). Side 1 = delta (smoked; the
# suite is left to run_validate.sh on the landed form), side 2 = call 6's shfl.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16
S=$S,bs64/kv4096/h128/q1/page1,bs128/kv4096/h16/q4/page1,bs128/kv4096/h16/q4
E=docs/notes/experiments
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_fp8mma_ss_64_sw128_delta.patch $E/exp_fp8mma_ss_64_sw128_shfl.patch
