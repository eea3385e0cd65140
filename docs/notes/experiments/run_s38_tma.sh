#!/usr/bin/env bash
# Prepared in the thirty-seventh session, not run (~260 s): the e4m3-score 64-row kernel's whole
# tiles of a contiguous cache by TMA (exp_s38_tma_ss64.patch: two tensor maps, the latent's 512
# bytes in 64 x 128-byte boxes with the 128-byte swizzle and the rope's 64 in 64 x 64-byte boxes
# with the 64-byte swizzle, encoded per launch through the runtime's driver entry point and
# passed as a __grid_constant__ parameter; one producer thread issues the 5 boxes and announces
# 36,864 bytes, the others arrive; partial tiles and paged caches keep the copy loop; the stage's
# M row m now holds token m, not the register form's order). Bound from call 3's no-copy probe:
# 0.92 (H128 q1) / 0.90 (H16 q4); predicted 0.95-0.97 (the HBM waits stay). Smoke first
# (forced wgmma: GpuRows64, GpuFp8Mma), then the A/B on FP8_MMA (contiguous, and a paged
# control: the stage row order changed for the copies too), then the whole suite on the patched
# build. Check "[tma] ... maps ok 1" in the smoke and A/B logs: ok 0 means the copies ran.
set -u
export MLA_TMA_LOG=1  # the kernel launcher says once per process whether the maps came
S=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs64/kv4096/h128/q1/page64,bs8/kv32768/h128/q1
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 \
  bash $E/run_patch.sh $E/exp_s38_tma_ss64.patch
