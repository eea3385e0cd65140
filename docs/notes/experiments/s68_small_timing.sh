#!/usr/bin/env bash
# s68_small_timing.sh MLA_BENCH LOG_DIR: small shapes of the rope format and of fp8 e4m3fn timed
# (unchecked, 30 calls) as planned, with mma16 forced and with wgmma forced, then mma16 and
# wgmma at 4 / 8 / 16 / 32 splits forced on bs4 kv1024 and bs4 kv8192 (rope format): the data
# for mma16's rope cost figure and the small-shape ties of plan.cpp (queue 0-s67 (2)).
# Summary on stdout; logs and CSVs in LOG_DIR. ~2 min on an H100.
set -u
M=$1 L=$2; mkdir -p "$L"
S='bs4/kv1024/h16/q1,bs4/kv512/h16/q1,bs2/kv1024/h16/q1,bs1/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs256/kv8192/h16/q1,bs8/kv1024/h64/q1'
FM=fp8_e4m3fn_bf16_rope,fp8_e4m3fn
bench() {  # bench NAME [ENV...]
  local name=$1; shift
  env "$@" timeout 90 "$M" --mla_no_check "--mla_formats=$FM" --mla_iters=30 "--mla_shapes=$S" \
    "--mla_csv=$L/$name.csv" > "$L/$name.log" 2>&1
  echo "$name rc=$? $SECONDS s"
}
bench plan
bench mma16 MLA_DECODE_STAGE1=mma16
bench wgmma MLA_DECODE_STAGE1=wgmma
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1'; FM=fp8_e4m3fn_bf16_rope
for n in 4 8 16 32; do
  bench mma16_s$n MLA_DECODE_STAGE1=mma16 MLA_DECODE_NUM_SPLITS=$n
  bench wgmma_s$n MLA_DECODE_STAGE1=wgmma MLA_DECODE_NUM_SPLITS=$n
done
# | format | shape | median | min | max | fwd | TB/s | floor | x floor | FlashMLA | ratio | route | variant | rows | splits
for f in plan mma16 wgmma; do
  echo "== $f"; grep -E '^\| *fp8' "$L/$f.log" | cut -d'|' -f2,3,4,9,14,15,16
done
for f in "$L"/mma16_s*.log "$L"/wgmma_s*.log; do
  echo "== $(basename "$f" .log)"; grep -E '^\| *fp8' "$f" | cut -d'|' -f3,4,14,15,16
done
