#!/usr/bin/env bash
# Thirty-fourth session, call 7 (~120 s): after the cold review of aead74a (no bug; test gaps):
# GpuRows64 on the final tree's own build (new cases: e4m3fnuz on 4-token pages and in the split
# cache form on 8-token pages), plain and under memcheck, forced to wgmma and by default.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
B=$(build_tree test_gpu_paths 200) || exit 1
echo "built $SECONDS s"
(cd "$B/tests" && timeout 60 ./test_gpu_paths --gtest_filter='GpuRows64.*') > "$OUT/rows64.log" 2>&1
echo "rows64 rc=$? $SECONDS s"; grep -E "^\[  (PASSED|FAILED|  OK) |Failure" "$OUT/rows64.log" | head
MLA_SANITIZE_TIMEOUT=90 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows64.*' memcheck
echo "total $SECONDS s"
