#!/usr/bin/env bash
# Thirty-third session, call 5 (~150 s, the budget's rest). A checked mla_bench (every element
# against the host reference) of 0.7.16's changed path, e4m3 scores (FP8_MMA) at 64 rows on
# contiguous caches, and e4m3fn with bf16 Q beside it: H128 q1 / q2, bs32 kv8192 H128, H16 q4.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
B=$(build_tree mla_bench 120) || exit 1
echo "built $SECONDS s"
F='bs128/kv4096/h16/q4/|kv4096/h128/q[12]/|bs32/kv8192/h128/q1/'
timeout 150 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn_qfp8_mma,fp8_e4m3fn --mla_extra \
  --mla_iters=20 "--benchmark_filter=$F" "--mla_csv=$OUT/mla_bench.csv" > "$OUT/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"
grep -E '^\|' "$OUT/mla_bench.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -40
