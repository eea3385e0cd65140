#!/usr/bin/env bash
# Sixty-eighth session, call 1 (~8 min, no carry), on the tree (0.7.41 + the margin print):
#  (a) GpuBf16RopeLarge with wgmma forced at 16, 32 and 64 rows: its "[ margin ]" lines (O's
#      worst |diff| / allowed, 3 seeds; queue 0-s67 (1b));
#  (b) the whole GPU suite (run_suite) in the time left (queue 0-s67 (1)).
# Logs in $OUT/s68_call1.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s68_call1
build_release "$L" "$B" || exit 1
for rows in 16 32 64; do
  (cd "$B/tests" && MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows timeout 60 ./test_gpu_input_forms \
    --gtest_filter='GpuBf16RopeLarge.*') > "$L/margin_r$rows.log" 2>&1
  echo "margin rows $rows rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$L/margin_r$rows.log" | tr '\n' ' ')"
  grep '^\[ margin \] fp8_e4m3fn ' "$L/margin_r$rows.log" | sed 's/.*gain/gain/' | tr '\n' ';' | cut -c1-900; echo
done
left=$((575 - SECONDS))
echo "suite limit $left s"
run_suite "$L" "$B" "$left"
grep -h '^\[ margin \] fp8_e4m3fn ' "$L"/suite/*.log 2>/dev/null | sort -k16 -g | tail -5
echo "total $SECONDS s"
