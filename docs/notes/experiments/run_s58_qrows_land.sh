#!/usr/bin/env bash
# Prepared in the fifty-seventh session for the next one's first call: what
# exp_s57_q_row_lanes.patch (the 64-row Q prologue a row per lane; measured 0.976-0.988x at 64
# rows with bf16 Q in s57's call 4) still needs before it lands. B = the tree with the patch
# (every target), A = the tree (bench only). A / B twice on the two 64-row kernels whose spills
# grew and which call 4 did not time (uniform e4m3fnuz; the forced balanced e4m3fn kernel,
# MLA_DECODE_SCHEDULE=balanced), fp8 Q widened at 64 rows, and uniform e4m3fn as the control;
# then B's whole GPU suite.
#   bash docs/notes/experiments/run_s58_qrows_land.sh      (no carry; ~300 s)
# Land it (0.7.37) if the suite passes and neither kernel is slower.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s58_qrows_land
mkdir -p "$L/a" "$L/bal"
AB=$(build_bench "$L/a") || exit 1
src=$(patched_copy "$L" docs/notes/experiments/exp_s57_q_row_lanes.patch) || exit 1
(cd "$src" && build_release "$L" "$B") || exit 1
echo "built $SECONDS s"
SHAPES=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4
ab_bench "$L" "$AB/bench/mla_bench" "$B/bench/mla_bench" "$SHAPES" \
  fp8_e4m3fnuz,fp8_e4m3fn,fp8_e4m3fn_qfp8
python3 docs/notes/experiments/ab_min.py "$L"
(export MLA_DECODE_SCHEDULE=balanced
 ab_bench "$L/bal" "$AB/bench/mla_bench" "$B/bench/mla_bench" \
   bs40/kv3000/h128/q1,bs64/kv4096/h128/q1 fp8_e4m3fn)
echo "balanced (MLA_DECODE_SCHEDULE=balanced):"; python3 docs/notes/experiments/ab_min.py "$L/bal"
echo "timed $SECONDS s"
left=$((560 - SECONDS)); [ $left -gt 240 ] && left=240
timeout $left python3 "$src/tests/ctest_grouped.py" --build "$B" -j 12 -E install_ \
  --log-dir "$L/suite" > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
