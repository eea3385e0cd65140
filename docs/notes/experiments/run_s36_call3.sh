#!/usr/bin/env bash
# Thirty-sixth session, call 3 (~120 s): e4m3 scores at 64 rows with K from shared memory, with
# call 2's two ncu findings fixed: the producer's 8-lane phases read half sectors (each sector
# fetched twice from L2: exp_fp8mma_ss_64_prod.patch, a phase now reads 4 rows' 32 bytes) and
# the V loads were 2-way bank-conflicted (exp_fp8mma_ss_64_prod_v.patch: lanes g >= 4 load the
# pair's second token first and swap). Sides: 1 = early issue + both fixes (smoked: forced
# wgmma, GpuFp8Mma and GpuRows64), 2 = both fixes, 3 = the producer fix only.
set -u
S=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs64/kv4096/h128/q1/page64,bs8/kv4096/h128/q1
E=docs/notes/experiments
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=250 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_fp8mma_ss_64_early_prod_v.patch $E/exp_fp8mma_ss_64_prod_v.patch \
  $E/exp_fp8mma_ss_64_prod.patch
