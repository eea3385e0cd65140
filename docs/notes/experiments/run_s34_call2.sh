#!/usr/bin/env bash
# Thirty-fourth session, call 2 (~170 s). Call 1 showed 1- and 4-token pages at 64 rows cost
# ~12 % over contiguous whether the pages are shuffled or in order (H128 q1: 160.2 / 158.3 on
# 1-token, 159.9 / 158.5 on 4-token, contiguous 142.0, 16-token 144.7 / 144.4): not DRAM
# locality. (1) ncu (--set full, boost clocks as in the timed runs) of the tree's 64-row kernel
# on a contiguous cache, 4-token pages in order (the same bytes in the same order as the
# contiguous cache: only the producer's loop and its page-table loads differ) and 16-token pages
# (warp runs). (2) Timing: does H16 q4 (one CTA an element, no second row group reading the
# tiles from L2) and e4m3 scores pay the same on small pages?
set -u
OUT=${OUT:-/tmp/out}
MLA_NCU_OPTS="--clock-control none" \
  MLA_NCU_CASES="bs64/kv4096/h128/q1 bs64/kv4096/h128/q1/page4/ordered bs64/kv4096/h128/q1/page16" \
  timeout 240 bash docs/notes/experiments/ncu_patch.sh 2>&1 | tail -150
B=$(ls -dt /tmp/bench_build.* | head -1)
S=bs128/kv4096/h16/q4,bs128/kv4096/h16/q4/page1,bs128/kv4096/h16/q4/page1/ordered
S=$S,bs128/kv4096/h16/q4/page16,bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page1
S=$S,bs64/kv4096/h128/q1/page4/ordered,bs64/kv4096/h128/q1/page16
for pass in 1 2; do
  timeout 100 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma --mla_iters=30 \
    "--mla_shapes=$S" --mla_no_check "--mla_csv=$OUT/probe_$pass.csv" > "$OUT/probe_$pass.log" 2>&1
  echo "probe $pass rc=$? $SECONDS s"
  grep -E '^\|' "$OUT/probe_$pass.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -20
done
