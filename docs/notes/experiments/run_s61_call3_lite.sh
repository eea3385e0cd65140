#!/usr/bin/env bash
# Sixty-first session, call 3 in short (~2.5 min, no carry; what was left of the device budget):
# the deferred add (exp_s61_defer_other.patch, B: bench and test_gpu_paths) against the tree
# (A): GpuRows64.* and GpuFp8Mma.* on B, then ab_bench (A, B, two rounds) on four 64-row shapes
# x bf16 Q / e4m3 scores.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s61_call3
X=docs/notes/experiments
mkdir -p "$L/a" "$L/ab"
src=$(patched_copy "$L" $X/exp_s61_defer_other.patch) || exit 1
build_bench "$L/a" > "$L/a/dir" &
(cd "$src" && build_release "$L" "$B" mla_bench &&
 timeout 200 cmake --build "$B" -j14 --target test_gpu_paths >> "$L/build.log" 2>&1) || exit 1
wait
A=$(cat "$L/a/dir"); [ -n "$A" ] || { echo "BUILD FAILED (A)"; exit 1; }
echo "built $SECONDS s"
timeout 90 "$B/tests/test_gpu_paths" --gtest_filter='GpuRows64.*:GpuFp8Mma.*' > "$L/smoke64.log" 2>&1
echo "smoke GpuRows64.*:GpuFp8Mma.* rc=$? $SECONDS s"; tail -3 "$L/smoke64.log"
ab_bench "$L/ab" "$A/bench/mla_bench" "$B/bench/mla_bench" \
  bs64/kv4096/h128/q1,bs40/kv3000/h128/q1,bs16/kv12000/h128/q1,bs128/kv4096/h16/q4 \
  fp8_e4m3fn,fp8_e4m3fn_qfp8_mma
python3 $X/ab_min.py "$L/ab"
echo "total $SECONDS s"
