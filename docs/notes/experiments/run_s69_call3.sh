#!/usr/bin/env bash
# Sixty-ninth session, call 3 (~3 min, no carry): the tree with the e4m3fnuz rope's hold dropped
# (the planner offers its wgmma kernels) and its cost figures fitted from call 2. Logs in
# $OUT/s69_call3.tgz:
# (1) every registration of the rope suites (planner, mma16 / wgmma forced, wgmma rows 16 / 32 /
#     64 forced), both flavours;
# (2) GpuBf16RopeLarge's margins (worst O |diff| / allowed) at the planner's rows and wgmma rows
#     16 / 32 / 64, both flavours (emulator: e4m3fnuz 0.559 rope-last, e4m3fn 0.592);
# (3) a checked mla_bench of fp8_e4m3fnuz_bf16_rope as planned (now wgmma), 30 calls.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s69_call3
build_release "$L" "$B" || exit 1
(cd "$B" && timeout 200 ctest -j 4 --output-on-failure -R \
  '(GpuBf16Rope[A-Za-z0-9]*\.[A-Za-z0-9]+|Fp8LatentHeadsPaging/GpuBf16Rope\..*)(\.stage1_[a-z0-9_]+)?$' \
  > "$L/rope_suites.log" 2>&1)
echo "rope suites rc=$? $SECONDS s"; grep -E "tests passed|tests failed" "$L/rope_suites.log"
for rows in plan 16 32 64; do
  env $([ $rows = plan ] || echo MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows) timeout 60 \
    "$B/tests/test_gpu_input_forms" --gtest_filter='GpuBf16RopeLarge.*' > "$L/margin_$rows.log" 2>&1
  echo "margins $rows rc=$?: $(grep -h 'margin \]' "$L/margin_$rows.log" | awk '{print $4, $NF}' |
    sort -k2 -g | awk '{m[$1]=$2} END {for (k in m) printf "%s %s  ", k, m[k]}')"
done
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs64/kv4096/h128/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4'
timeout 120 "$B/bench/mla_bench" --mla_extra --mla_formats=fp8_e4m3fnuz_bf16_rope --mla_iters=30 \
  "--mla_shapes=$S" "--mla_csv=$L/plan.csv" > "$L/plan.log" 2>&1
echo "== plan rc=$? $SECONDS s"
grep -E '^\| *fp8' "$L/plan.log" | cut -d'|' -f2,3,4,9,14,15,16,20
echo "total $SECONDS s"
