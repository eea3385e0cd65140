#!/usr/bin/env bash
# Fifty-seventh session: the 64-row Q prologue with a row per lane (write_q_row_lanes;
# exp_s57_q_row_lanes.patch, in the tree when this ran: B). A = the tree with the patch reversed
# (bench only). B's 64-row GPU tests first (stop if they fail), then A / B alternating twice on
# 64-row shapes (bf16 Q and e4m3 scores) with a 16-row control, B's CTA timeline on two shapes
# (exp_s56_cta_timeline.patch on top), and B's whole GPU suite.
#   bash docs/notes/experiments/run_s57_qrows.sh        (no carry; ~300 s)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s57_qrows
mkdir -p "$L/a" "$L/tl"
(build_bench "$L/a" docs/notes/experiments/exp_s57_q_row_lanes.patch -R > "$L/a/dir") &
a_pid=$!
(build_bench "$L/tl" docs/notes/experiments/exp_s56_cta_timeline.patch > "$L/tl/dir") &
t_pid=$!
build_release "$L" "$B" || exit 1
wait $a_pid; AB=$(cat "$L/a/dir"); [ -x "$AB/bench/mla_bench" ] || { echo "A build failed"; exit 1; }
wait $t_pid; TB=$(cat "$L/tl/dir")
echo "built $SECONDS s"
(cd "$B/tests" && timeout 120 ./test_gpu_paths \
  '--gtest_filter=GpuRows64.*:*GpuFp8Mma*:AllFormats/GpuFormatHeads.*h128*:AllFormats/GpuFormatHeads.*h64*') \
  > "$L/smoke.log" 2>&1
rc=$?; echo "smoke rc=$rc $SECONDS s"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$L/smoke.log"
if [ $rc -ne 0 ]; then grep -m 20 -E "Failure|Expected|Which is|FAILED" "$L/smoke.log"; exit 1; fi
SHAPES=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
SHAPES=$SHAPES,bs40/kv3000/h128/q1,bs16/kv12000/h128/q1,bs4/kv1024/h16/q1
ab_bench "$L" "$AB/bench/mla_bench" "$B/bench/mla_bench" "$SHAPES" fp8_e4m3fn,fp8_e4m3fn_qfp8_mma
python3 docs/notes/experiments/ab_min.py "$L"
echo "timed $SECONDS s"
if [ "${MLA_QROWS_TL:-1}" = 1 ] && [ -x "$TB/bench/mla_bench" ]; then
  for c in fp8_e4m3fn:bs64/kv4096/h128/q1 fp8_e4m3fn_qfp8_mma:bs64/kv4096/h128/q1; do
    f=${c%%:*}; s=${c#*:}; n=$L/tl/${f}_$(echo "$s" | tr / _)
    timeout 60 "$TB/bench/mla_bench" --mla_no_check --mla_iters=30 "--mla_formats=$f" \
      "--mla_shapes=$s" "--mla_csv=$n.csv" > "$n.log" 2>&1 || echo "$c rc=$?"
    echo "== $c"; python3 docs/notes/experiments/cta_timeline_parse.py "$n.log" | grep -E "ev[345]"
  done
fi
left=$((${MLA_END:-420} - SECONDS)); [ $left -gt 230 ] && left=230
if [ $left -lt 60 ]; then
  echo "suite skipped: $left s left before MLA_END"
else
  timeout $left python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ \
    --log-dir "$L/suite" > "$L/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
fi
echo "total $SECONDS s"
