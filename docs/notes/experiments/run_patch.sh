#!/usr/bin/env bash
# One device call for kernel experiments kept as patches against the tree:
#   bash docs/notes/experiments/run_patch.sh PATCH [PATCH2 ...]
# Run on the GPU machine (from anywhere in the checkout: it works in the repository root) under
# a `timeout` of ~570 s; every log goes into one tarball under $OUT (the file-count limit holds):
#   1. builds the tree (A: mla_bench), the tree with PATCH (B: everything) and with each further
#      patch (C, D, ...: mla_bench), in parallel;
#   2. one A/B/C... with bench/ab.py (2 rounds; the formats in $MLA_AB_FORMATS, fp8_e4m3fn
#      unless set; floors measured by every pass; each side against A, the order rotating each
#      round; at most $MLA_AB_TIMEOUT s, 300 unless set; extra mla_bench flags in $MLA_AB_ARGS,
#      e.g. --mla_no_check; $MLA_AB_METRIC=fwd_median_us compares the one-shot fwd instead of
#      plan_run; $MLA_AB_ENV: VAR=value words for the A/B's processes only, e.g.
#      MLA_DECODE_STAGE1=mma16) on $MLA_AB_FILTER, by default the 14
#      cases of the sixth and seventh sessions (the eight competition shapes, H16 q_len 2 / 4,
#      H128 bs64 kv4096, bs1 kv65536): ~115 s for three sides on one format, ~200 s on two;
#   3. B's whole GPU suite (-E install_: CI runs those; none with $MLA_NO_SUITE set, for sides
#      that are wrong by design, e.g. timing probes) through tests/ctest_grouped.py with the
#      time left (~112 s on the H200 in the eighth session; builds take ~27 s).
#   With $MLA_SMOKE set (a GoogleTest filter of test_gpu_paths, e.g.
#   'AllFormats/GpuFormatHeads.*fp8_e4m3fn*:Fp8Q/GpuFp8Query.*'), B's cases of that filter run
#   first, forced to wgmma ($MLA_SMOKE_STAGE1 names another variant), within
#   $MLA_SMOKE_TIMEOUT s (90 unless set); the call stops there if they fail or hang (a
#   never-run kernel's first call).
#   With $MLA_AFTER_AB set (a shell command), it runs after the A/B (and the sweep), before the
#   suite, with MLA_BUILD_A / MLA_BUILD_B naming the A and B build folders and its output in
#   after_ab.log (e.g. a short mla_bench look at another setting of the tree).
#   With $MLA_SWEEP set (a benchmark filter), bench/split_sweep.sh runs it on A and on B after
#   the A/B, once per split count in $MLA_SWEEP_COUNTS ("2 4 8 16 32 64" unless set): sweep-a.csv
#   and sweep-b.csv, for calibrating the planner against a changed kernel.
# Each step has its own timeout; a step cut short leaves what it wrote.
set -u
[ $# -ge 1 ] || { echo "usage: $0 PATCH [PATCH2 ...]"; exit 2; }
FORMATS=${MLA_AB_FORMATS:-fp8_e4m3fn}
F=${MLA_AB_FILTER:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q1/|bs1/kv65536/h16/q1/'}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda"
patches=()
for patch in "$@"; do
  p=$(realpath -e "$patch") || { echo "no patch $patch"; exit 2; }
  patches+=("$p")
done
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)  # this script is docs/notes/experiments/run_patch.sh
cd "$ROOT" || exit 1
trap 'tar -czf "$OUT/run_patch.tgz" -C "$W" .' EXIT
# Fresh build folders every call (not under $W, which is packed): a warm machine keeps /tmp, and
# tar restores old mtimes, so ninja would keep objects built from an earlier call's sources.
B=$(mktemp -d /tmp/run_patch_builds.XXXXXX)
{ (cmake -S "$ROOT" -B "$B/a" $CM && timeout 200 cmake --build "$B/a" -j4 --target mla_bench) \
    > "$W/build-a.log" 2>&1; echo "a rc=$?" >> "$W/build-rc.txt"; } &
sides=("$B/a/bench/mla_bench"); n=0
for patch in "${patches[@]}"; do
  n=$((n + 1)); src=$B/src-$n; bld=$B/$n
  mkdir -p "$src"
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src"
  if ! (cd "$src" && patch -p1 --batch --forward < "$patch") > "$W/patch-$n.log" 2>&1; then
    echo "PATCH $patch FAILED"; cat "$W/patch-$n.log"; kill $(jobs -p) 2>/dev/null; wait; exit 1
  fi
  target=$([ $n -eq 1 ] && echo all || echo mla_bench)
  { (cmake -S "$src" -B "$bld" $CM && timeout 250 cmake --build "$bld" -j8 --target $target) \
      > "$W/build-$n.log" 2>&1; echo "$n rc=$?" >> "$W/build-rc.txt"; } &
  sides+=("$bld/bench/mla_bench")
  echo "side $n: $patch" | tee -a "$W/sides.txt"
done
wait
cat "$W/build-rc.txt"
if grep -qv " rc=0" "$W/build-rc.txt"; then echo "BUILD FAILED"; tail -n 30 "$W"/build-*.log; exit 1; fi
echo "builds $SECONDS s"
if [ -n "${MLA_SMOKE:-}" ]; then  # a new kernel's first run: stop here if it fails or hangs
  (cd "$B/1/tests" && MLA_DECODE_STAGE1=${MLA_SMOKE_STAGE1:-wgmma} \
    timeout "${MLA_SMOKE_TIMEOUT:-90}" ./test_gpu_paths "--gtest_filter=$MLA_SMOKE") \
    > "$W/smoke.log" 2>&1
  rc=$?; echo "smoke rc=$rc $SECONDS s"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$W/smoke.log"
  if [ $rc -ne 0 ]; then
    grep -m 20 -E "Failure|error|Expected|Which is" "$W/smoke.log"
    [ -n "${MLA_SMOKE_CONTINUE:-}" ] || exit 1  # set: go on (an accuracy measurement)
  fi
fi
timeout "${MLA_AB_TIMEOUT:-300}" env ${MLA_AB_ENV:-} python3 bench/ab.py --rounds 2 \
  --csv "$W/ab.csv" \
  ${MLA_AB_METRIC:+--metric "$MLA_AB_METRIC"} "${sides[@]}" -- \
  "--mla_formats=$FORMATS" --mla_extra --mla_iters=20 "--benchmark_filter=$F" ${MLA_AB_ARGS:-} \
  > "$W/ab.log" 2>&1
echo "ab rc=$? $SECONDS s"; tail -18 "$W/ab.log"
if [ -n "${MLA_SWEEP:-}" ]; then
  for side in a b; do
    bin=$([ $side = a ] && echo "$B/a/bench/mla_bench" || echo "$B/1/bench/mla_bench")
    timeout 120 bash bench/split_sweep.sh "$bin" "$W/sweep-$side.csv" "$MLA_SWEEP" \
      ${MLA_SWEEP_COUNTS:-2 4 8 16 32 64} > "$W/sweep-$side.log" 2>&1
    echo "sweep $side rc=$? $SECONDS s"
  done
fi
if [ -n "${MLA_AFTER_AB:-}" ]; then
  MLA_BUILD_A=$B/a MLA_BUILD_B=$B/1 bash -c "$MLA_AFTER_AB" > "$W/after_ab.log" 2>&1
  echo "after_ab rc=$? $SECONDS s"; tail -20 "$W/after_ab.log"
fi
left=$((560 - SECONDS))
if [ -n "${MLA_NO_SUITE:-}" ]; then
  echo "suite skipped (MLA_NO_SUITE)"
elif [ $left -gt 60 ]; then
  timeout $left python3 "$ROOT/tests/ctest_grouped.py" --build "$B/1" -j 12 -E install_ \
    --log-dir "$W/suite" > "$W/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$W/suite.log" | head -20
fi
echo "total $SECONDS s"
