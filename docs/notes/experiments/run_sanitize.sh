#!/usr/bin/env bash
# compute-sanitizer over test_gpu_paths cases of one build, each tool in turn, with stage 1
# forced to a variant (wgmma unless $MLA_DECODE_STAGE1 says otherwise):
#   bash docs/notes/experiments/run_sanitize.sh BUILD_DIR GTEST_FILTER [TOOL ...]
# TOOL: memcheck (default), racecheck, synccheck, initcheck. Each tool gets at most
# $MLA_SANITIZE_TIMEOUT s (120 unless set); logs go to $OUT/sanitize-TOOL.log, and a summary
# line per tool (its rc and compute-sanitizer's "ERROR SUMMARY") to stdout.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR GTEST_FILTER [TOOL ...]"; exit 2; }
build=$1; filter=$2; shift 2
tools=("$@"); [ ${#tools[@]} -gt 0 ] || tools=(memcheck)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bin=$build/tests/test_gpu_paths
[ -x "$bin" ] || { echo "no $bin"; exit 2; }
status=0
for tool in "${tools[@]}"; do
  log=$OUT/sanitize-$tool.log
  (cd "$build/tests" && MLA_DECODE_STAGE1=${MLA_DECODE_STAGE1:-wgmma} \
    timeout "${MLA_SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
    "$bin" "--gtest_filter=$filter") > "$log" 2>&1
  rc=$?; [ $rc -eq 0 ] || status=1
  echo "$tool rc=$rc $(grep -m1 'ERROR SUMMARY' "$log") $(grep -E '^\[  (PASSED|FAILED) ' "$log" |
    tr '\n' ' ')"
done
exit $status
