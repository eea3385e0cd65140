#!/usr/bin/env bash
# Thirty-fourth session, call 1 (~450 s, carry ["build-peers"]). (1) run_validate.sh on 0.7.16's
# tree (the whole GPU suite, a checked mla_bench over e4m3fn / fp8 Q / FP8_MMA, FlashMLA beside
# it); 0.7.16 ran its suite only through a patch of equal PTX. (2) The locality probe of
# "After 0.7.16": the same kernels on pages in order (bench "/ordered": each element's pages
# consecutive in memory, the page-table walk unchanged) against shuffled pages and a contiguous
# cache, at 64 rows (H128 q1) and 16 rows (bs32 kv8192 H16), two passes (timing only; one small
# ordered case checked against the host reference first). If 1-token
# pages in order run at the contiguous speed, their ~12 % at 64 rows is DRAM locality.
set -u
OUT=${OUT:-/tmp/out}
timeout 430 bash docs/notes/experiments/run_validate.sh
B=$(ls -dt /tmp/validate_build.* | head -1)
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page1/ordered
S=$S,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page4/ordered
S=$S,bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page16/ordered
S=$S,bs32/kv8192/h16/q1,bs32/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page1/ordered
timeout 60 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma --mla_iters=5 \
  --mla_shapes=bs8/kv4096/h128/q1/page1/ordered,bs8/kv4096/h16/q1/page16/ordered \
  "--mla_csv=$OUT/probe_check.csv" > "$OUT/probe_check.log" 2>&1
echo "probe check rc=$? $SECONDS s"; grep -E "failed|cases ran" "$OUT/probe_check.log"
for pass in 1 2; do
  timeout 100 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn --mla_iters=30 "--mla_shapes=$S" \
    --mla_no_check \
    "--mla_csv=$OUT/probe_$pass.csv" > "$OUT/probe_$pass.log" 2>&1
  echo "probe $pass rc=$? $SECONDS s"
  grep -E '^\|' "$OUT/probe_$pass.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -14
done
