#!/usr/bin/env bash
# Sixty-fifth session, call 3 (~7-8 min on any GPU, no carry): validation of mma16's row groups.
# (1) the whole GPU suite (tests/ctest_grouped.py, every forced-variant registration);
# (2) compute-sanitizer memcheck and racecheck with mma16 forced, on uneven lengths at 32 and
#     128 heads (the planner's 32- and 64-row kernels), every format;
# (3) a checked mla_bench (every element against the host reference) over the two formats whose
#     sm_90 plans now take the row groups: fp8 with a bf16 rope, MXFP4 keys with fp8 V.
# Logs in $OUT/s65_call3.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s65_call3
build_release "$L" "$B" || exit 1
run_suite "$L" "$B" 300
filter='AllFormats/GpuFormatHeads.UnevenLengths/*_h128:AllFormats/GpuFormatHeads.UnevenLengths/*_h32'
OUT=$L MLA_DECODE_STAGE1=mma16 MLA_SANITIZE_TIMEOUT=90 \
  bash docs/notes/experiments/run_sanitize.sh "$B" "$filter" memcheck racecheck
echo "sanitize done $SECONDS s"
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/|bs1/kv65536/h16/q1/'
timeout 120 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn_bf16_rope,mxfp4k_fp8v_e4m3fn \
  --mla_extra --mla_iters=20 "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" \
  > "$L/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"
grep -E '^\|' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -40
echo "total $SECONDS s"
