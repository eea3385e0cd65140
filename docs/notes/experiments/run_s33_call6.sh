#!/usr/bin/env bash
# Thirty-third session, call 6 (~60 s). The cold review of 0.7.16 (helper) found no bug but no
# test asserting the e4m3-score runs on a contiguous cache at 64 rows: GpuRows64 now has
# FP8_MMA cases on a contiguous cache, 64- (split cache form) and 128-token pages. Builds the
# tree's test_gpu_paths and runs GpuRows64.* and GpuFp8Mma.*.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
T=$(build_tree test_gpu_paths 120) || exit 1
echo "built $SECONDS s"
timeout 100 "$T/tests/test_gpu_paths" --gtest_filter='GpuRows64.*:GpuFp8Mma.*' \
  > "$OUT/rows64.log" 2>&1
echo "tests rc=$? $SECONDS s"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure|Expected|Which is" "$OUT/rows64.log" | head -30
