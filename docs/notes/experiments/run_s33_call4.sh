#!/usr/bin/env bash
# Thirty-third session, call 4 (~450 s). In calls 2 and 3 the 64-row kernel with e4m3 scores
# (FP8_MMA) ran faster on 16-token pages (runs of 16 rows a warp, 118.4-119.1 us) than on a
# contiguous cache (the 4-row-step loop, 120.6-121.2). B = exp_runs_contiguous_all64.patch: the
# runs (no look-ahead: no page) on contiguous caches and pages of a multiple of 64 tokens with
# e4m3 scores, and on contiguous caches with bf16 scores; C = exp_runs_contiguous_fp8mma.patch
# (e4m3 scores only; its FP8_MMA kernels' code is B's). A/B/C on H128 q1 bs64 kv4096 contiguous,
# 64- and 16-token pages (control), bs32 kv8192 H128 q1, H128 q2 bs64 kv4096, H16 q4 bs128
# kv4096; e4m3fn and FP8_MMA; smoke GpuRows64 and the fp8-Q suites; B's suite; then the tree's
# GpuRows64 (its new cases) on the tree's own build. Prediction: FP8_MMA contiguous 0.97-0.99
# (121 -> ~118.5), bf16 scores 1.00 +- 0.01 (142 contiguous against 144 paged with look-ahead).
set -u
D=docs/notes/experiments
OUT=${OUT:-/tmp/out}
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16
S=$S,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
MLA_SMOKE='GpuRows64.*:Fp8Q*/GpuFp8Query.*:GpuFp8Mma.*' \
  MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=220 \
  timeout 480 bash $D/run_patch.sh $D/exp_runs_contiguous_all64.patch \
  $D/exp_runs_contiguous_fp8mma.patch
echo "run_patch rc=$? $SECONDS s"
T=$(mktemp -d /tmp/tree_tests.XXXXXX)
(cmake -S . -B "$T" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
   -DMLA_BACKEND=cuda && timeout 150 cmake --build "$T" -j16 --target test_gpu_paths) \
  > "$OUT/tree_build.log" 2>&1
echo "tree build rc=$? $SECONDS s"
timeout 90 "$T/tests/test_gpu_paths" --gtest_filter='GpuRows64.*' > "$OUT/tree_rows64.log" 2>&1
echo "tree GpuRows64 rc=$? $SECONDS s"; tail -5 "$OUT/tree_rows64.log"
