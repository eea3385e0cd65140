#!/usr/bin/env bash
# Thirty-sixth session, call 9 (~150 s): GpuRows64 after the test's new FP8_MMA cases (pages of
# 3 and 12 tokens: a division in the page offset, split CTAs of 1-17 tiles), on the final
# tree's own build: as planned, forced to wgmma, and forced under compute-sanitizer memcheck.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
B=$(build_tree test_gpu_paths 200) || exit 1
echo "built $SECONDS s"
(cd "$B/tests" && timeout 60 ./test_gpu_paths --gtest_filter='GpuRows64.*') > "$OUT/rows64.log" 2>&1
echo "planned rc=$? $SECONDS s"; tail -3 "$OUT/rows64.log"
(cd "$B/tests" && MLA_DECODE_STAGE1=wgmma timeout 60 ./test_gpu_paths \
  --gtest_filter='GpuRows64.*') > "$OUT/rows64_wgmma.log" 2>&1
echo "forced rc=$? $SECONDS s"; tail -3 "$OUT/rows64_wgmma.log"
MLA_SANITIZE_TIMEOUT=90 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows64.*' memcheck
echo "total $SECONDS s"
