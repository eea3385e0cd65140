#!/usr/bin/env bash
# Thirty-eighth session, call 2 (~300 s): the 64-row fp8 kernels with f16 scores (bf16 Q, and
# fp8 Q without FP8_MMA) in the swizzled stage layout of the e4m3 scores, filled by TMA for whole
# tiles of a contiguous cache (exp_s38_swizzled_rs64.patch; K loaded into registers from the
# swizzle, S^T row j of a warp on stage row j ^ 4 (j odd)). Predicted: 0.95-0.97 on contiguous
# H128 q1/q2 and H16 q4 (call 1: TMA took 0.93 on the e4m3 scores' kernel, whose round is
# shorter); paged caches lose the 64-row producer's page runs (kWarpRun) for
# copy_tile_rows_ss: 1.00-1.03 there. Smoke first (GpuRows64, GpuFp8Mma, GpuLong), the A/B,
# then the whole suite on the patched build.
set -u
S=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16,bs8/kv32768/h128/q1
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*:GpuLong.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=170 \
  bash $E/run_patch.sh $E/exp_s38_swizzled_rs64.patch
