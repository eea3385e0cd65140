#!/usr/bin/env bash
# Sixty-ninth session, call 1 (~3 min, no carry): queue 0-s68 (1) and (1b) on 0.7.42.
# (1) run_s68_small_check.sh's checked bench of the small shapes 0.7.42 moved to wgmma, as
#     planned and with mma16 forced (the old choice).
# (1b) the mma16-only plans 0.7.42 moved to fewer splits: e4m3fnuz latent rows beside a bf16 rope
#     on the H200 (mma16 is its only stage 1 there), a split sweep (MLA_DECODE_NUM_SPLITS) of five
#     moved shapes, 30 calls, unchecked, then the plan checked. Old -> new splits (host count):
#     bs48 kv2048 8 -> 2, bs96 kv2048 4 -> 1, bs48 kv8192 8 -> 5, bs16 kv200 4 -> 1,
#     bs24 kv16384 11 -> 5 (all H16 q1, 16 rows). Logs in $OUT/s69_call1.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
bash docs/notes/experiments/run_s68_small_check.sh
. docs/notes/experiments/start_builds.sh
device_call s69_call1
build_release "$L" "$B" mla_bench || exit 1
S='bs48/kv2048/h16/q1,bs96/kv2048/h16/q1,bs48/kv8192/h16/q1,bs16/kv200/h16/q1,bs24/kv16384/h16/q1'
run() {  # run NAME [ENV...]
  local name=$1; shift
  env "$@" timeout 100 "$B/bench/mla_bench" --mla_extra --mla_formats=fp8_e4m3fnuz_bf16_rope \
    --mla_iters=30 "--mla_shapes=$S" "--mla_csv=$L/$name.csv" \
    $([ "$name" = plan ] || echo --mla_no_check) > "$L/$name.log" 2>&1
  echo "== $name rc=$? $SECONDS s"
  grep -E '^\| *fp8' "$L/$name.log" | cut -d'|' -f3,4,9,14,15,16,20
}
for s in 1 2 4 5 8 11; do run "splits$s" MLA_DECODE_NUM_SPLITS=$s; done
run plan
echo "total $SECONDS s"
