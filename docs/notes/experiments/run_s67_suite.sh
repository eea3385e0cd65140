#!/usr/bin/env bash
# Sixty-seventh session (~8 min, no carry): the tree with the bf16 rope on wgmma offered unforced
# (the hold reverted, costs fitted, one S chain): the whole GPU suite (tests/ctest_grouped.py,
# every forced-variant registration), a checked mla_bench of the rope format as the planner
# chooses (default + engine shapes), and memcheck / racecheck of rope cases at 16 and 32 rows.
# Logs in $OUT/s67_suite.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s67_suite
build_release "$L" "$B" || exit 1
run_suite "$L" "$B"  # 400 s (it ran with 240 in s67, too few on the H100)
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/|bs1/kv65536/h16/q1/|bs32/kv8192/h128/q1/'
timeout 150 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn_bf16_rope,fp8_e4m3fn --mla_extra --mla_iters=20 \
  "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" > "$L/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"
grep -E '^\|' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -60
f='Fp8LatentHeadsPaging/GpuBf16Rope.*fp8_e4m3fn_h128_paged_plan*:GpuBf16RopePages.*:GpuBf16RopeLarge.*'
for rt in 16:memcheck 32:memcheck 32:racecheck; do
  rows=${rt%%:*}; tool=${rt##*:}
  log=$L/sanitize-$tool-r$rows.log
  (cd "$B/tests" && MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows timeout 60 \
    compute-sanitizer --tool $tool --error-exitcode 99 ./test_gpu_input_forms \
    "--gtest_filter=$f") > "$log" 2>&1
  echo "$tool rows $rows rc=$? $(grep -m1 'ERROR SUMMARY' "$log") $(grep -E '^\[  (PASSED|FAILED) ' "$log" | tr '\n' ' ') $(grep -o 'Race reported.* in [a-z_0-9]*\.h:[0-9]*' "$log" | sed 's/.* at //' | sort | uniq -c | tr '\n' ' ') $SECONDS s"
done
echo "total $SECONDS s"
