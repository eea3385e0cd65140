#!/usr/bin/env bash
# Sixty-eighth session (~6 min, no carry; meant for the H200): the target rows of issue 7 on the
# tree (0.7.41; H200 validation of 0.7.38-0.7.41, queue 0-s65 (2)): a checked mla_bench, 30
# calls, of fp8 e4m3fn, fp8 Q on the e4m3 MMA, bf16, MXFP4 and the bf16 rope over the
# competition shapes and the target rows' engine shapes; then s68_small_timing.sh (queue 0-s67
# (2)). Logs in $OUT/s68_h200_rows.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s68_h200_rows
build_release "$L" "$B" mla_bench || exit 1
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/'
timeout 330 "$B/bench/mla_bench" --mla_extra --mla_iters=30 \
  --mla_formats=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,bf16,mxfp4,fp8_e4m3fn_bf16_rope \
  "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" > "$L/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"
# | format | shape | median | min | max | fwd | TB/s | floor | x floor | FlashMLA | ratio | route | variant | rows | splits | ... | ok
grep -E '^\| *(fp8|bf16|mxfp4)' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,11,14,15,16,20
grep -iE 'geomean' "$L/mla_bench.log" | head -12
left=$((560 - SECONDS))
[ $left -gt 60 ] && timeout $left bash docs/notes/experiments/s68_small_timing.sh "$B/bench/mla_bench" "$L/small"
echo "total $SECONDS s"
