#!/usr/bin/env bash
# Thirty-third session, call 6 (~60 s). The cold review of 0.7.16 (helper) found no bug but no
# test asserting the e4m3-score runs on a contiguous cache at 64 rows: GpuRows64 now has
# FP8_MMA cases on a contiguous cache, 64- (split cache form) and 128-token pages. Builds the
# tree's test_gpu_paths and runs GpuRows64.* and GpuFp8Mma.*.
set -u
OUT=${OUT:-/tmp/out}
T=$(mktemp -d /tmp/tree_tests.XXXXXX)
(cmake -S . -B "$T" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
   -DMLA_BACKEND=cuda && timeout 120 cmake --build "$T" -j16 --target test_gpu_paths) \
  > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; exit 1; }
echo "built $SECONDS s"
timeout 100 "$T/tests/test_gpu_paths" --gtest_filter='GpuRows64.*:GpuFp8Mma.*' \
  > "$OUT/rows64.log" 2>&1
echo "tests rc=$? $SECONDS s"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure|Expected|Which is" "$OUT/rows64.log" | head -30
