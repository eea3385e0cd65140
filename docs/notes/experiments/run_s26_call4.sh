#!/usr/bin/env bash
# Twenty-sixth session, fourth device call: bf16 shapes where the planner takes mma16 (15 of the
# 1,135 grid shapes it gives mma16), timed forced to mma16 and forced to wgmma (each with the
# planner's split count for that variant), for the bf16 cost table. Timing only.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=$(mktemp -d /tmp/call4.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 250 cmake --build "$B" -j16 --target mla_bench) \
  > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; exit 1; }
echo "built $SECONDS s"
S='bs1/kv64/h8/q1,bs1/kv1024/h16/q1,bs1/kv4096/h16/q1,bs2/kv4096/h16/q1,bs1/kv200/h128/q2,bs1/kv64/h128/q4,bs2/kv200/h8/q4,bs3/kv2048/h8/q2,bs4/kv64/h16/q2,bs6/kv200/h32/q1,bs8/kv1024/h16/q1,bs12/kv200/h8/q3,bs24/kv64/h16/q4,bs256/kv64/h8/q2,bs4/kv1024/h16/q1'
for round in 1 2; do
  for v in mma16 wgmma; do
    MLA_DECODE_STAGE1=$v timeout 150 "$B/bench/mla_bench" --mla_formats=bf16 --mla_no_check \
      --mla_iters=20 --mla_shapes=$S --benchmark_filter=. --mla_csv="$OUT/bf16_${v}_$round.csv" \
      > "$OUT/bf16_${v}_$round.log" 2>&1
    echo "$v round $round rc=$? $SECONDS s"
  done
done
for v in mma16 wgmma; do
  echo "== $v (round 2)"; grep -E '^ bf16 \| bs' "$OUT/bf16_${v}_2.log" | cut -d'|' -f3,4,9,14,15,16
done
