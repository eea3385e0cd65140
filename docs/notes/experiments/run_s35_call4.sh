#!/usr/bin/env bash
# Thirty-fifth session, call 4 (~420 s, carry ["build-peers"]): run_validate.sh on 0.7.18 (the
# whole GPU suite, a checked mla_bench over e4m3fn / fp8 Q / FP8_MMA, FlashMLA beside it), then
# a checked mla_bench of the paths 0.7.18 changed (fp8 at 32 rows, bf16 at 16 / 32 rows on
# pages of 1, 4, 16 and 64 tokens; every element against the host reference).
set -u
OUT=${OUT:-/tmp/out}
timeout 440 bash docs/notes/experiments/run_validate.sh
B=$(ls -dt /tmp/validate_build.* | head -1)
S=bs16/kv4096/h16/q2/page1,bs16/kv4096/h16/q2/page4,bs16/kv4096/h16/q2/page16
S=$S,bs16/kv4096/h16/q2/page64,bs16/kv2048/h16/q1/page1,bs16/kv2048/h16/q1/page16
timeout 100 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn,bf16 --mla_iters=5 "--mla_shapes=$S" \
  "--mla_csv=$OUT/paged_check.csv" > "$OUT/paged_check.log" 2>&1
echo "paged check rc=$? $SECONDS s"; grep -E "failed|cases ran" "$OUT/paged_check.log"
grep -E '^\|' "$OUT/paged_check.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -16
