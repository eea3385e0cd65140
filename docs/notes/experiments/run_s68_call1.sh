#!/usr/bin/env bash
# Sixty-eighth session, call 1 (~9 min, no carry), on the tree (0.7.41 + the margin print):
#  (a) GpuBf16RopeLarge with wgmma forced at 16, 32 and 64 rows: its "[ margin ]" lines (O's
#      worst |diff| / allowed, 3 seeds; queue 0-s67 (1b));
#  (b) the rope format's small shapes timed (unchecked, 30 calls) as planned, mma16 forced and
#      wgmma forced, then mma16 at 4 / 8 / 16 / 32 splits forced on bs4 kv1024 and bs4 kv8192:
#      the data for mma16's rope cost figure (queue 0-s67 (2));
#  (c) the whole GPU suite (run_suite) in the time left.
# Logs in $OUT/s68_call1.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s68_call1
build_release "$L" "$B" || exit 1
for rows in 16 32 64; do
  (cd "$B/tests" && MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows timeout 60 ./test_gpu_input_forms \
    --gtest_filter='GpuBf16RopeLarge.*') > "$L/margin_r$rows.log" 2>&1
  echo "margin rows $rows rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$L/margin_r$rows.log" | tr '\n' ' ')"
  grep '^\[ margin \] fp8_e4m3fn ' "$L/margin_r$rows.log" | sed 's/.*gain/gain/' | tr '\n' ';' | cut -c1-900; echo
done
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs1/kv65536/h16/q1,bs8/kv1024/h64/q1,bs16/kv2048/h32/q2'
bench() {  # bench NAME [ENV...]
  local name=$1; shift
  env "$@" timeout 90 "$B/bench/mla_bench" --mla_no_check --mla_formats=fp8_e4m3fn_bf16_rope \
    --mla_iters=30 "--mla_shapes=$S" "--mla_csv=$L/$name.csv" > "$L/$name.log" 2>&1
  echo "$name rc=$? $SECONDS s"
}
bench plan
bench mma16 MLA_DECODE_STAGE1=mma16
bench wgmma MLA_DECODE_STAGE1=wgmma
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1'
for n in 4 8 16 32; do
  bench mma16_s$n MLA_DECODE_STAGE1=mma16 MLA_DECODE_NUM_SPLITS=$n
  bench wgmma_s$n MLA_DECODE_STAGE1=wgmma MLA_DECODE_NUM_SPLITS=$n
done
for f in plan mma16 wgmma; do echo "== $f"; grep -E '^\|' "$L/$f.log" | cut -d"|" -f3,4,9,10,14,15,16 | head -14; done
for f in "$L"/mma16_s*.log "$L"/wgmma_s*.log; do echo "== $(basename "$f")"; grep -E '^\| *fp8' "$f" | cut -d"|" -f3,4,9,10,14,15,16; done
left=$((575 - SECONDS))
echo "suite limit $left s"
run_suite "$L" "$B" "$left"
grep -h '^\[ margin \] fp8_e4m3fn ' "$L"/suite/*.log 2>/dev/null | sort -k16 -g | tail -5
echo "total $SECONDS s"
