#!/usr/bin/env bash
# Thirty-fifth session, call 8 (~200 s): after the cold review of adefa65 (no bug; test gaps):
# GpuRows16And32 with its new cases (fp8 32-row runs on 48- and 64-token pages, bf16 on 2-token
# pages at 32 rows and 16-token pages in the split cache form at 16, and 4 long elements whose
# CTAs copy the rope pieces in blocks) on the tree's own build, plain, then under memcheck.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
B=$(build_tree test_gpu_paths 200) || exit 1
echo "built $SECONDS s"
(cd "$B/tests" && timeout 120 ./test_gpu_paths --gtest_filter='GpuRows16And32.*') \
  > "$OUT/rows32.log" 2>&1
echo "rows32 rc=$? $SECONDS s"; grep -E "^\[  (PASSED|FAILED|  OK) |Failure" "$OUT/rows32.log" | head
grep -o "rows/cta=[0-9]* tile=64 splits=[0-9]*[^,]*" "$OUT/rows32.log" | sort | uniq -c | head
MLA_SANITIZE_TIMEOUT=150 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows16And32.*' memcheck
echo "total $SECONDS s"
