#!/usr/bin/env bash
# Twenty-sixth session, fourth device call: 15 small bf16 shapes of mma16 plans (the planner
# gives mma16 to 1,135 of 4,320 bf16 grid shapes; bs4 kv1024 H16 ran 22.6 us on mma16 and 14.6
# forced to wgmma) timed on the tree's plans, forced to mma16, forced to wgmma (each with the
# planner's split count for that variant), and on the plans of exp_bf16_mma16_fixed12.patch
# (mma16's bf16 fixed cost 2 -> 12 us, a one-point fit). Timing only (a planner change: the
# kernels' correctness on every shape is the suite's, forced-variant registrations included).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=$(mktemp -d /tmp/call4.XXXXXX)
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda"
mkdir -p "$W/src"; tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$W/src"
(cd "$W/src" && patch -p1 --batch < docs/notes/experiments/exp_bf16_mma16_fixed12.patch) \
  > "$OUT/patch.log" 2>&1 || { echo "PATCH FAILED"; exit 1; }
(cmake -S . -B "$W/a" $CM && timeout 250 cmake --build "$W/a" -j8 --target mla_bench) \
  > "$OUT/build-a.log" 2>&1 &
(cmake -S "$W/src" -B "$W/b" $CM && timeout 250 cmake --build "$W/b" -j8 --target mla_bench) \
  > "$OUT/build-b.log" 2>&1 &
wait
[ -x "$W/a/bench/mla_bench" ] && [ -x "$W/b/bench/mla_bench" ] || {
  echo "BUILD FAILED"; tail -20 "$OUT"/build-*.log; exit 1; }
echo "built $SECONDS s"
S='bs1/kv64/h8/q1,bs1/kv1024/h16/q1,bs1/kv4096/h16/q1,bs2/kv4096/h16/q1,bs1/kv200/h128/q2,bs1/kv64/h128/q4,bs2/kv200/h8/q4,bs3/kv2048/h8/q2,bs4/kv64/h16/q2,bs6/kv200/h32/q1,bs8/kv1024/h16/q1,bs12/kv200/h8/q3,bs24/kv64/h16/q4,bs256/kv64/h8/q2,bs4/kv1024/h16/q1'
for side in a_plain a_mma16 a_wgmma b_plain; do
  bin="$W/${side%%_*}/bench/mla_bench"; v=${side#*_}
  if [ $v = plain ]; then env=(); else env=(MLA_DECODE_STAGE1=$v); fi
  env "${env[@]}" timeout 100 "$bin" --mla_formats=bf16 --mla_no_check --mla_iters=20 \
    --mla_shapes=$S --benchmark_filter=. --mla_csv="$OUT/bf16_$side.csv" \
    > "$OUT/bf16_$side.log" 2>&1
  echo "$side rc=$? $SECONDS s"
done
for side in a_plain a_mma16 a_wgmma b_plain; do
  echo "== $side"; grep -E '^\| bf16 \| bs' "$OUT/bf16_$side.log" | cut -d'|' -f3,4,9,14,15,16
done
