#!/usr/bin/env bash
# Twenty-seventh session, fifth device call: (1) the tree's new GPU tests (GpuRows64, the
# paged long-element test) under the default, one-split and forced-wgmma environments, logs
# first; (2) if time is left, the planner A/B of run_s27_call4.sh with a shorter timeout.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=$(mktemp -d /tmp/call5.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 200 cmake --build "$B" -j16 --target test_gpu_paths) \
  > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; exit 1; }
echo "built $SECONDS s"
F='GpuRows64.*:AllFormats/GpuPathsFormat.LargeShuffled*:AllFormats/GpuPathsFormat.ShuffledPages*'
for env in "" "MLA_DECODE_NUM_SPLITS=1" "MLA_DECODE_STAGE1=wgmma"; do
  n=${env:-default}; n=${n//=/_}
  (cd "$B/tests" && env $env timeout 120 ./test_gpu_paths "--gtest_filter=$F") \
    > "$OUT/tests_$n.log" 2>&1
  echo "$n rc=$? $SECONDS s"; grep -E "^\[  (PASSED|FAILED) |tests ran|rows/cta" "$OUT/tests_$n.log" | sort | uniq -c | head -12
done
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$(sed -n "s/^S='\(.*\)'$/\1/p" docs/notes/experiments/run_s27_call4.sh)" \
  MLA_AB_TIMEOUT=110 timeout 170 bash docs/notes/experiments/run_patch.sh \
  docs/notes/experiments/exp_rows64_tile_236.patch > "$OUT/ab.log" 2>&1
echo "ab rc=$? $SECONDS s"; grep -E "^(fp8|geomean)" "$OUT/ab.log" | head -40
