#!/usr/bin/env bash
# Prepared in the thirty-fourth session, not run (~150 s): where else small pages cost. The
# 64-row fp8 kernel paid ~12 % on pages of 1-8 tokens in its shuffled producer loop (0.7.17 took
# that to ~4 %). The other producers that still take a shuffled slot per row: fp8 at 16 / 32 rows
# (1-token pages ~1-2 % at 16 rows in the thirty-fourth session's probe), bf16 at 16 / 32 rows,
# MXFP4 at 16 / 32 rows (copy_tile_rows_mxfp4). Timing only (--mla_no_check), two passes:
# contiguous, 1-token pages shuffled and in order, 16-token pages, per format at the shapes that
# take each row count (bs32 kv8192 H16 q1: 16 rows; bs128 kv4096 H16 q2: 32 rows; bs64 kv4096
# H128 q1: bf16 / MXFP4's 32 rows). Where a row count pays > 3 % on 1-token pages, the own-page
# rows of copy_tile_rows_own_pages (8 threads a row) are the candidate.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
B=$(build_bench "$OUT") || exit 1
S=""
for base in bs32/kv8192/h16/q1 bs128/kv4096/h16/q2 bs64/kv4096/h128/q1; do
  S="$S,$base,$base/page1,$base/page1/ordered,$base/page16"
done
for pass in 1 2; do
  timeout 150 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn,bf16,mxfp4 --mla_iters=20 \
    "--mla_shapes=${S#,}" --mla_no_check "--mla_csv=$OUT/probe_$pass.csv" \
    > "$OUT/probe_$pass.log" 2>&1
  echo "probe $pass rc=$? $SECONDS s"
  grep -E '^\|' "$OUT/probe_$pass.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -40
done
