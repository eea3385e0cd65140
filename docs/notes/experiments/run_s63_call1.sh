#!/usr/bin/env bash
# Sixty-third session, call 1 (~7-9 min; carry ["out/v020"] for the H200 part): the seesaw's
# value products of a round's two tiles in one pipeline (exp_s63_value_pipeline.patch, B1), and
# the same with e4m3 scores' value units of one m-block pair, two in flight
# (exp_s63_value_units.patch, B2), against the tree (A). B1's and B2's GpuRows64.*,
# GpuFp8Mma.* and GpuRows16And32.* first (a deadlock shows as a timeout); then A, B1, B2 in
# turn, two rounds, on four 64-row shapes and two 16-row seesaw shapes x bf16 Q / e4m3 scores
# (abb_bench, ab_min.py). On an H200 (with out/v020/src.tar.gz carried) also 0.2.0 beside the
# tree off the grid (v020_offgrid, as run_v020_offgrid.sh). Where B1's geomean is below 0.99,
# B1's whole GPU suite with the time left (MLA_SUITE_SIDE=b2: B2's).
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s63_call1
X=docs/notes/experiments
H200=0; grep -q H200 "$L/gpu.txt" && [ -f out/v020/src.tar.gz ] && H200=1
mkdir -p "$L/a" "$L/b1" "$L/b2"
[ $H200 = 1 ] && v020_build
build_bench "$L/a" > "$L/a/dir" &
for s in b1 b2; do
  p=$X/exp_s63_value_pipeline.patch; [ $s = b2 ] && p=$X/exp_s63_value_units.patch
  src=$(patched_copy "$L/$s" $p) || exit 1
  echo "$src" > "$L/$s/src"
  (cd "$src" && build_release "$L/$s" "$B/$s" mla_bench > /dev/null &&
   timeout 200 cmake --build "$B/$s" -j8 --target test_gpu_paths >> "$L/$s/build.log" 2>&1 ||
   echo "$s BUILD FAILED") &
done
wait
A=$(cat "$L/a/dir"); [ -n "$A" ] && [ -x "$B/b1/tests/test_gpu_paths" ] &&
  [ -x "$B/b2/tests/test_gpu_paths" ] || { echo "BUILD FAILED"; tail -5 "$L"/*/build.log; exit 1; }
echo "built $SECONDS s"
for s in b1 b2; do
  timeout 150 "$B/$s/tests/test_gpu_paths" \
    --gtest_filter='GpuRows64.*:GpuFp8Mma.*:GpuRows16And32.*' > "$L/$s/smoke.log" 2>&1
  echo "$s smoke rc=$? $SECONDS s"; grep -E "^\[  (PASSED|FAILED) " "$L/$s/smoke.log" | head -8
done
MLA_SHAPES=bs64/kv4096/h128/q1,bs40/kv3000/h128/q1,bs16/kv12000/h128/q1,bs128/kv4096/h16/q4,bs32/kv8192/h16/q1,bs256/kv1024/h16/q1 \
  abb_bench "$L" "$A/bench/mla_bench" "$B/b1/bench/mla_bench" "$B/b2/bench/mla_bench"
echo "== B1 = one value pipeline a round ($SECONDS s):"
python3 $X/ab_min.py "$L/ab1" | tee "$L/ab1.txt"
echo "== B2 = B1 + e4m3 scores' units of one pair:"
python3 $X/ab_min.py "$L/ab2" | tee "$L/ab2.txt"
g1=$(python3 $X/ab_min.py "$L/ab1" --geomean)
g2=$(python3 $X/ab_min.py "$L/ab2" --geomean)
echo "B1 geomean $g1, B2 geomean $g2"
if [ $H200 = 1 ]; then
  wait "${vpid:-0}" 2>/dev/null
  v020_offgrid "$A" 2 330
fi
side=${MLA_SUITE_SIDE:-b1}; g=$g1; [ "$side" = b2 ] && g=$g2
if python3 -c "import sys; sys.exit(0 if float('$g') < 0.99 else 1)"; then
  src=$(cat "$L/$side/src")
  (cd "$src" && timeout 150 cmake --build "$B/$side" -j14 >> "$L/$side/build.log" 2>&1)
  left=$((575 - SECONDS))
  if [ $left -gt 60 ]; then
    timeout $left python3 "$src/tests/ctest_grouped.py" --build "$B/$side" -j 12 -E install_ \
      --log-dir "$L/suite" > "$L/suite.log" 2>&1
    echo "$side suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -4
  fi
fi
echo "total $SECONDS s"
