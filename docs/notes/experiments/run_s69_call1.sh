#!/usr/bin/env bash
# Sixty-ninth session, call 1 (~3-4 min, no carry; prepared, not run: no device was lent in s69).
# One Release build of mla_bench, then three parts, logs in $OUT/s69_call1.tgz:
# (1) queue 0-s68 (1), run_s68_small_check.sh's checked bench: the small shapes 0.7.42 moved
#     to wgmma (and two it did not), fp8 e4m3fn and the bf16 rope, as planned and with mma16
#     forced (0.7.41's choice on the moved shapes).
# (1b) queue 0-s68 (1b), the mma16-only plans 0.7.42 moved to fewer splits: e4m3fnuz latent rows
#     beside a bf16 rope with mma16 forced (its only stage 1 on Hopper until 0.7.43 gave it
#     wgmma; AMD's and sm_80's plans are mma16's), a split sweep
#     (MLA_DECODE_NUM_SPLITS) of five moved shapes, 30 calls, unchecked, then the plan checked.
#     0.7.41 -> 0.7.42 splits (host count): bs48 kv2048 8 -> 2, bs96 kv2048 4 -> 1, bs48 kv8192
#     8 -> 5, bs16 kv200 4 -> 1, bs24 kv16384 11 -> 5 (all H16 q1, 16 rows).
# (3) The balanced schedule (forced-only since s54-s55, never timed at 32 rows) on off-grid
#     misses it was designed for, beside the plan, fp8 e4m3fn, 30 calls, checked: bs100 kv1500
#     H32 q3 (300 CTAs of 24 tiles in 3 waves; balanced_schedule.md predicted ~81 us, s59's
#     H200 plan 110.8, FlashMLA 94.1), bs40 kv3000 H128 q1 (80 CTAs on 132 units), bs50 kv3500
#     H32 q2 (100 CTAs).
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s69_call1
build_release "$L" "$B" mla_bench || exit 1
bench() {  # bench NAME FORMATS SHAPES [ENV...]: one mla_bench run, 30 calls; NAME *_nc unchecked
  local name=$1 formats=$2 shapes=$3; shift 3
  env "$@" timeout 120 "$B/bench/mla_bench" --mla_extra "--mla_formats=$formats" \
    --mla_iters=30 "--mla_shapes=$shapes" "--mla_csv=$L/$name.csv" \
    $(case $name in *_nc) echo --mla_no_check ;; esac) > "$L/$name.log" 2>&1
  echo "== $name rc=$? $SECONDS s"
  # | format | shape | median | ... | floor(9) | ... | variant(14) | rows | splits | ... | ok(20)
  grep -E '^\| *(fp8|bf16|mxfp4)' "$L/$name.log" | cut -d'|' -f2,3,4,9,14,15,16,20
}
S1='bs1/kv64/h16/q1,bs64/kv64/h16/q1,bs1024/kv64/h16/q1,bs1/kv1024/h16/q1,bs2/kv1024/h16/q1,bs4/kv512/h16/q1,bs4/kv1024/h16/q1,bs1/kv200/h8/q2,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1'
bench small_plan fp8_e4m3fn,fp8_e4m3fn_bf16_rope "$S1"
bench small_mma16 fp8_e4m3fn,fp8_e4m3fn_bf16_rope "$S1" MLA_DECODE_STAGE1=mma16
S2='bs48/kv2048/h16/q1,bs96/kv2048/h16/q1,bs48/kv8192/h16/q1,bs16/kv200/h16/q1,bs24/kv16384/h16/q1'
for s in 1 2 4 5 8 11; do
  bench "fnuz_rope_splits${s}_nc" fp8_e4m3fnuz_bf16_rope "$S2" MLA_DECODE_NUM_SPLITS=$s \
    MLA_DECODE_STAGE1=mma16
done
bench fnuz_rope_plan fp8_e4m3fnuz_bf16_rope "$S2" MLA_DECODE_STAGE1=mma16
S3='bs100/kv1500/h32/q3,bs40/kv3000/h128/q1,bs50/kv3500/h32/q2'
bench offgrid_plan fp8_e4m3fn "$S3"
bench offgrid_balanced fp8_e4m3fn "$S3" MLA_DECODE_SCHEDULE=balanced
echo "total $SECONDS s"
