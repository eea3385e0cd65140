#!/usr/bin/env bash
# Thirty-sixth session, call 4 (~100 s): e4m3 scores at 64 rows with K from shared memory in
# the 128-byte swizzle (exp_fp8mma_ss_64_sw128.patch: latent in four 8 KB blocks of 1 KB atoms,
# rope in 512-byte atoms of the 64-byte swizzle; the producer's warp reads 4 rows' 128 bytes an
# instruction and writes them conflict-free; V loads conflict-free by the swizzle). Side 1 =
# sw128 (smoked: forced wgmma, GpuFp8Mma and GpuRows64), side 2 = sw128 with the early issue
# (12 bytes of spill).
set -u
S=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs64/kv4096/h128/q1/page64,bs8/kv4096/h128/q1
E=docs/notes/experiments
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_fp8mma_ss_64_sw128.patch $E/exp_fp8mma_ss_64_early_sw128.patch
