#!/usr/bin/env bash
# Sixty-first session, call 3 (~5 min, no carry; never ran: the budget left could not start a
# machine): consumer 0 adds consumer 1's tile one round later at 64 rows
# (exp_s61_defer_other.patch, B1: bench and test_gpu_paths) against the tree (A), and the same
# with the wait-share stamps (exp_s61_defer_other_stamped.patch, B2: bench only; its times
# include the stamps' cost). GpuRows64.* and GpuFp8Mma.* run on B1 first (a deadlock shows as a
# timeout); then A, B1, B2 in turn, two rounds, on four 64-row shapes x bf16 Q / e4m3 scores
# (abb_bench); then B2's sections per round (wait_share_parse.py; consumer 0's "m_full wait"
# there is its wait for consumer 1's previous maxima). MLA_LITE=1 (~2.5 min): no B2, A and B1
# only (ab_bench). MLA_SUITE=1: where B1's geomean is below 0.99, B1's whole GPU suite at the end.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s61_call3
X=docs/notes/experiments
LITE=${MLA_LITE:-0}
mkdir -p "$L/a" "$L/b2"
src=$(patched_copy "$L" $X/exp_s61_defer_other.patch) || exit 1
build_bench "$L/a" > "$L/a/dir" &
[ "$LITE" = 1 ] || build_bench "$L/b2" $X/exp_s61_defer_other_stamped.patch > "$L/b2/dir" &
(cd "$src" && build_release "$L" "$B" mla_bench &&
 timeout 200 cmake --build "$B" -j14 --target test_gpu_paths >> "$L/build.log" 2>&1) || exit 1
wait
A=$(cat "$L/a/dir"); B2=$(cat "$L/b2/dir" 2>/dev/null)
[ -n "$A" ] && { [ "$LITE" = 1 ] || [ -n "$B2" ]; } || { echo "BUILD FAILED"; exit 1; }
echo "built $SECONDS s"
timeout 120 "$B/tests/test_gpu_paths" --gtest_filter='GpuRows64.*:GpuFp8Mma.*' > "$L/smoke64.log" 2>&1
echo "smoke GpuRows64.*:GpuFp8Mma.* rc=$? $SECONDS s"
tail -3 "$L/smoke64.log"
if [ "$LITE" = 1 ]; then
  mkdir -p "$L/ab1"
  ab_bench "$L/ab1" "$A/bench/mla_bench" "$B/bench/mla_bench" \
    bs64/kv4096/h128/q1,bs40/kv3000/h128/q1,bs16/kv12000/h128/q1,bs128/kv4096/h16/q4 \
    fp8_e4m3fn,fp8_e4m3fn_qfp8_mma
  echo "== B1 = deferred add:"
  python3 $X/ab_min.py "$L/ab1" | tee "$L/ab1.txt"
else
  abb_bench "$L" "$A/bench/mla_bench" "$B/bench/mla_bench" "$B2/bench/mla_bench"
  echo "== B1 = deferred add:"
  python3 $X/ab_min.py "$L/ab1" | tee "$L/ab1.txt"
  echo "== B2 = deferred add, stamped:"
  python3 $X/ab_min.py "$L/ab2"
  for c in fp8_e4m3fn:bs64/kv4096/h128/q1 fp8_e4m3fn_qfp8_mma:bs64/kv4096/h128/q1; do
    f=${c%%:*}; s=${c#*:}; n=$L/b2/${f}_$(echo "$s" | tr / _)
    MLA_TL_AT=10 timeout 60 "$B2/bench/mla_bench" --mla_no_check --mla_iters=30 "--mla_formats=$f" \
      "--mla_shapes=$s" "--mla_csv=$n.csv" > "$n.log" 2>&1 || echo "$c rc=$?"
    echo "== stamped deferred $f $s"; python3 $X/wait_share_parse.py "$n.log" 64
  done
fi
echo "timed $SECONDS s"
g=$(python3 $X/ab_min.py "$L/ab1" --geomean)
echo "B1 geomean $g"
if [ "${MLA_SUITE:-0}" = 1 ] && python3 -c "import sys; sys.exit(0 if float('$g') < 0.99 else 1)"; then
  (cd "$src" && timeout 200 cmake --build "$B" -j14 >> "$L/build.log" 2>&1)
  left=$((560 - SECONDS)); [ $left -gt 240 ] && left=240
  timeout $left python3 "$src/tests/ctest_grouped.py" --build "$B" -j 12 -E install_ \
    --log-dir "$L/suite" > "$L/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -4
fi
echo "total $SECONDS s"
