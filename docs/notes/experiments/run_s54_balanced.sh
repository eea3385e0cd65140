#!/usr/bin/env bash
# Fifty-fourth session, one device call (~350-450 s, no carry): the balanced schedule's first GPU
# run (kernels/splitkv/balanced.h, MLA_DECODE_SCHEDULE=balanced; e4m3fn caches on the wgmma
# kernels). 1. Its GPU tests (test_gpu_balanced, four registrations: the planner's rows and 16 /
# 32 / 64 forced) and the uniform kernels' suites that the refactor touched (the barrier init
# moved into a function, Stage1Work::partial_head0): GpuRows64, GpuRows16And32, GpuLongCta,
# GpuFp8Mma, GpuVectors, Formats, AllFormats/GpuPathsFormat in their plain registrations.
# (MLA_UNIFORM_TESTS=1: also the uniform suites below; the first call ran them, all passed.)
# 2. An A/B, one build, timing only (--mla_no_check): each shape at the uniform plan then with
# MLA_DECODE_SCHEDULE=balanced at the same rows (MLA_DECODE_ROWS where given), fp8 e4m3fn
# cache, bf16 Q. Predictions (docs/notes/balanced_schedule.md, H100): bs40 kv3000 H128 q1
# 104 -> ~75 us, bs100 kv1500 H32 q3 (32 rows) 111 -> ~81; shapes whose uniform plan fills
# every unit with equal CTAs about the same or a little slower (the item boundaries, the scan).
# Logs: $OUT/balanced.tgz.
set -u
. docs/notes/experiments/start_builds.sh
open_call balanced  # L, B, and $OUT/balanced.tgz on exit
build_release "$L" "$B" ${MLA_BALANCED_TARGET:-} || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader > "$L/gpu.txt" 2>&1
if [ "${MLA_BALANCED_TESTS:-1}" = 1 ]; then
  T=$L/balanced_tests.log
  (cd "$B" && timeout 150 ctest -R 'GpuBalanced' --output-on-failure -j2) > "$T" 2>&1
  echo "balanced tests rc=$? $SECONDS s: $(grep -E 'tests passed|tests failed' "$T")"
fi
if [ -n "${MLA_UNIFORM_TESTS:-}" ]; then
  R='^(GpuRows64|GpuRows16And32|GpuLongCta|GpuFp8Mma|GpuVectors|Formats/GpuFormat'
  R="$R|AllFormats/GpuPathsFormat)\\."
  (cd "$B" && timeout 170 ctest -R "$R" \
    -E '\.(stage1_[a-z0-9]+|one_split|nopdl|notma|notma_one_split)$' --output-on-failure -j2) \
    > "$L/uniform_tests.log" 2>&1
  echo "uniform tests rc=$? $SECONDS s: $(grep -E 'tests passed|tests failed' "$L/uniform_tests.log")"
fi
# shape:rows (0: the planner's); MLA_BALANCED_CASES replaces them, MLA_BALANCED_SIDES the sides
# (uniform, balanced, balanced_nopdl: balanced with MLA_DECODE_PDL=0).
CASES=${MLA_BALANCED_CASES:-"bs40/kv3000/h128/q1:0 bs100/kv1500/h32/q3:32 bs16/kv12000/h128/q1:0 bs8/kv8192/h64/q2:0
bs64/kv4096/h128/q1:0 bs128/kv4096/h16/q2:0 bs4/kv8192/h16/q1:0 bs1/kv65536/h128/q1:0
bs32/kvuneven8192/h128/q1:0 bs64/kvuneven4096/h16/q1:0 bs8/kvuneven16384/h64/q2:0
bs256/kv1024/h32/q3:0 bs50/kv3500/h32/q2:32 bs100/kvuneven3000/h16/q1:0 bs24/kv3000/h128/q4:0
bs40/kv3000/h128/q1:32 bs16/kvuneven12000/h128/q1:0"}
for c in $CASES; do
  IFS=: read -r tag rows <<< "$c"
  for side in ${MLA_BALANCED_SIDES:-uniform balanced}; do
    f=$L/${tag//\//_}_r${rows}_$side
    env $( [ "$rows" != 0 ] && echo MLA_DECODE_ROWS=$rows ) \
      $( [ $side != uniform ] && echo MLA_DECODE_SCHEDULE=balanced ) \
      $( [ $side = balanced_nopdl ] && echo MLA_DECODE_PDL=0 ) \
      timeout 60 "$B/bench/mla_bench" --mla_no_check --mla_formats=fp8_e4m3fn --mla_iters=30 \
      "--mla_shapes=$tag" "--mla_csv=$f.csv" > "$f.log" 2>&1
    us=$(python3 -c "import csv,sys; r=next(csv.DictReader(open(sys.argv[1])))
print(r['median_us'], r['floor_read_us'], r['rows_per_cta'], r['route'], r['splits'])" \
      "$f.csv" 2>/dev/null)
    echo "$tag $side $us"
  done
  [ $SECONDS -gt 520 ] && { echo "stopping at $SECONDS s"; break; }
done
echo "total $SECONDS s"
