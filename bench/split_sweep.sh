#!/usr/bin/env bash
# Calibration aid for the split-KV cost model (src/planner.cpp): runs the benchmark once per
# forced split count (MLA_DECODE_NUM_SPLITS) and prints the median of every case per count,
# next to the planner's own choice (the run without the override): column forced_splits is the
# count forced, or "auto"; the benchmark's own splits column is what the plan says. Timing
# only: outputs are not compared with the host reference here (--mla_no_check); the tests do
# that.
#   bench/split_sweep.sh BENCH_BINARY OUT_CSV [benchmark filter] [split counts...]
set -euo pipefail
bench=$1 out=$2 filter=${3:-fp8_e4m3fn} ; shift 3 || true
counts=("$@"); [ ${#counts[@]} -gt 0 ] || counts=(1 2 4 8 16 32)
tmp=$(mktemp -d)
"$bench" --mla_no_check --benchmark_filter="$filter" --mla_csv="$tmp/auto.csv" > /dev/null
for s in "${counts[@]}"; do
  MLA_DECODE_NUM_SPLITS=$s "$bench" --mla_no_check --benchmark_filter="$filter" --mla_csv="$tmp/s$s.csv" > /dev/null
done
{
  head -1 "$tmp/auto.csv" | sed 's/^/forced_splits,/'
  tail -n +2 "$tmp/auto.csv" | sed 's/^/auto,/'
  for s in "${counts[@]}"; do tail -n +2 "$tmp/s$s.csv" | sed "s/^/$s,/"; done
} > "$out"
rm -rf "$tmp"
