#!/usr/bin/env bash
# Prepared in the thirty-eighth session, not run (~330 s): two small changes to 0.7.21's
# swizzled kernels, against the tree.
#   B exp_s39_producer_work.patch: the 64-row producer derives its work (stage1_work), tile
#     count and shared-memory pointers again after the role split, so no prologue value lives
#     into its 24 registers: ptxas spills 8 bytes instead of 24-28 (the paged TMA's cost,
#     1.006-1.010 on contiguous caches in s38 call 3). Predicted 0.99-0.995 on contiguous
#     H128 q1 / q2, unchanged elsewhere.
#   C exp_s39_proxy_fence.patch: fence.proxy.async before a consumer warp releases a swizzled
#     stage (its generic V / K loads, then TMA's async-proxy refill; the review of 0.7.21).
#     Predicted 1.00-1.01 (one fence per warp and tile).
# Smoke and suite on B. If B wins, land it; C lands if it costs nothing measurable.
# Added in the fortieth session (0.7.23): after the A/B, ~40 s of mla_bench on A with mma16
# forced, e4m3fn Q without and with FP8_MMA (mma16's e4m3 scores, their first timing); the
# suite's .stage1_mma16 runs are their first correctness run (GpuFp8Mma expects all 12 cases on
# them).
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs256/kv8192/h16/q1
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*:GpuLongCta.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  MLA_AFTER_AB='MLA_DECODE_STAGE1=mma16 timeout 60 "$MLA_BUILD_A/bench/mla_bench" \
    --mla_formats=fp8_e4m3fn_qfp8,fp8_e4m3fn_qfp8_mma --mla_iters=20 --mla_no_check \
    --mla_shapes=bs1/kv1024/h16/q1,bs4/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv4096/h128/q1 \
    "--mla_csv=${OUT:-/tmp/out}/mma16_e4m3.csv" 2>&1 | grep -E "^decode/|failed|cases ran"' \
  bash $E/run_patch.sh $E/exp_s39_producer_work.patch $E/exp_s39_proxy_fence.patch
