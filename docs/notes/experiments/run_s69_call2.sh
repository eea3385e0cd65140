#!/usr/bin/env bash
# Sixty-ninth session, call 2 (~4 min, no carry; prepared, not run: no device was lent in s69).
# 0.7.43's e4m3fnuz + bf16 rope wgmma kernels (forced only) on a GPU, logs in $OUT/s69_call2.tgz:
# (1) the rope suites with wgmma forced, planner rows and rows 16 / 32 / 64 (both flavours; 126
#     tests, 285 s on the emulated sm_90a), the margins GpuBf16RopeLarge prints (emulator:
#     e4m3fnuz worst 0.559 with rope-last, e4m3fn 0.592 with rope-first);
# (2) a checked mla_bench of fp8_e4m3fnuz_bf16_rope as planned (mma16, held) and with wgmma
#     forced, 30 calls: the competition shapes and the engine rows. Predicted: wgmma at
#     0.75-0.85x mma16's time where stage 1 is compute-bound (e4m3fn's rope form: wgmma 0.7.41
#     against mma16), e4m3fnuz's bit decode 1.14-1.34x e4m3fn's wgmma time (plain fp8's).
#     If (1) passes and (2) wins, drop stage1_offered_unforced's hold and fit stage1_cost's
#     e4m3fnuz rope figures (src/plan.cpp) from it.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s69_call2
build_release "$L" "$B" || exit 1
(cd "$B" && timeout 240 ctest -j 4 --output-on-failure -R \
  '(GpuBf16Rope[A-Za-z0-9]*\.[A-Za-z0-9]+|Fp8LatentHeadsPaging/GpuBf16Rope\..*)\.stage1_wgmma(_rows(16|32|64))?$' \
  > "$L/rope_suites.log" 2>&1)
echo "rope suites rc=$? $SECONDS s"; grep -E "tests passed|tests failed" "$L/rope_suites.log"
grep -h "margin \]" "$L/rope_suites.log" | sort -t' ' -k14 -g | tail -6
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs64/kv4096/h128/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4'
for side in plan wgmma; do
  env $([ $side = wgmma ] && echo MLA_DECODE_STAGE1=wgmma) timeout 150 "$B/bench/mla_bench" \
    --mla_extra --mla_formats=fp8_e4m3fnuz_bf16_rope,fp8_e4m3fn_bf16_rope --mla_iters=30 \
    "--mla_shapes=$S" "--mla_csv=$L/$side.csv" > "$L/$side.log" 2>&1
  echo "== $side rc=$? $SECONDS s"
  grep -E '^\| *fp8' "$L/$side.log" | cut -d'|' -f2,3,4,9,14,15,16,20
done
echo "total $SECONDS s"
