#!/usr/bin/env bash
# Fifty-eighth session: the 64-row prologue is DRAM-bound (the timeline of exp_s58_cta_timeline_q:
# thread 0's Q words land 7.2 us into a bf16-Q CTA, tile 0 only at ~11.8, Q (9.4 MB) and three
# stages a CTA (14.5 MB) in flight at once). exp_s58_q_first{1,2}.patch: the producer copies
# only its first 1 / 2 tiles, then waits until every consumer's Q^T is written. A (the tree),
# B1, B2 benches; A, B1, B2 in turn, two rounds; then a checked bench of B1 and B2 (~200 s, no
# carry).
#   bash docs/notes/experiments/run_s58_q_first.sh   (MLA_B1_PATCH, MLA_B2_PATCH: other B sides)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s58_q_first
mkdir -p "$L/a" "$L/b1" "$L/b2" "$L/ab1" "$L/ab2"
build_bench "$L/a" > "$L/a/dir" &
build_bench "$L/b1" "${MLA_B1_PATCH:-docs/notes/experiments/exp_s58_q_first1.patch}" > "$L/b1/dir" &
build_bench "$L/b2" "${MLA_B2_PATCH:-docs/notes/experiments/exp_s58_q_first2.patch}" > "$L/b2/dir" &
wait
A=$(cat "$L/a/dir"); B1=$(cat "$L/b1/dir"); B2=$(cat "$L/b2/dir")
[ -n "$A" ] && [ -n "$B1" ] && [ -n "$B2" ] || { echo "BUILD FAILED"; exit 1; }
echo "built $SECONDS s"
abb_bench "$L" "$A/bench/mla_bench" "$B1/bench/mla_bench" "$B2/bench/mla_bench"
echo "== B1 = ${MLA_B1_PATCH:-first 1 tile}:"; python3 docs/notes/experiments/ab_min.py "$L/ab1"
echo "== B2 = ${MLA_B2_PATCH:-first 2 tiles}:"; python3 docs/notes/experiments/ab_min.py "$L/ab2"
echo "timed $SECONDS s"
for side in B1 B2; do
  case $side in B1) bin=$B1;; B2) bin=$B2;; esac
  timeout 120 "$bin/bench/mla_bench" --mla_iters=3 "--mla_formats=$FORMATS,fp8_e4m3fnuz" \
    "--mla_shapes=$SHAPES,bs2/kv100/h128/q1,bs3/kv70/h64/q2" > "$L/check_$side.log" 2>&1
  echo "checked $side rc=$? (0: every case ok)"
done
echo "total $SECONDS s"
