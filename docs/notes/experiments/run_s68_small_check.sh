#!/usr/bin/env bash
# Sixty-eighth session (~2 min, no carry): the tree with mma16's fixed costs 4.0 / 5.0 (fp8 / the
# rope form): a checked mla_bench, 30 calls, of the small shapes the change moves to wgmma (and
# two it does not), fp8 e4m3fn and the bf16 rope, as planned and with mma16 forced (the old
# choice on the moved shapes). Logs in $OUT/s68_small_check.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s68_small_check
build_release "$L" "$B" mla_bench || exit 1
S='bs1/kv64/h16/q1,bs64/kv64/h16/q1,bs1024/kv64/h16/q1,bs1/kv1024/h16/q1,bs2/kv1024/h16/q1,bs4/kv512/h16/q1,bs4/kv1024/h16/q1,bs1/kv200/h8/q2,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1'
for side in plan mma16; do
  env $([ $side = mma16 ] && echo MLA_DECODE_STAGE1=mma16) timeout 100 "$B/bench/mla_bench" \
    --mla_formats=fp8_e4m3fn,fp8_e4m3fn_bf16_rope --mla_iters=30 "--mla_shapes=$S" \
    "--mla_csv=$L/$side.csv" > "$L/$side.log" 2>&1
  echo "== $side rc=$? $SECONDS s"
  # | format | shape | median | ... | floor(9) | x floor | FlashMLA | ratio | route | variant(14) | rows | splits | ... | ok(20)
  grep -E '^\| *fp8' "$L/$side.log" | cut -d'|' -f2,3,4,9,14,15,16,20
done
echo "total $SECONDS s"
