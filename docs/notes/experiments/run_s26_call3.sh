#!/usr/bin/env bash
# Twenty-sixth session, third device call. (1) The long-CTA kernel with e4m3 scores too
# (exp_long_cta_fp8mma.patch) against the tree, FP8_MMA on long and short 16-row CTAs; B's
# checked mla_bench (every element against the host reference) on two long-CTA shapes. (2) bf16
# small shapes, where the planner takes mma16 (bs4 kv1024: 22.4 us, 16 splits): the tree's
# bench forced to wgmma at several split counts beside the plain plan.
set -u
D=docs/notes/experiments
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S='bs4/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv8192/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q1,bs64/kv16384/h16/q1,bs16/kv32768/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=130 \
  timeout 200 bash $D/run_patch.sh $D/exp_long_cta_fp8mma.patch
BLD=$(ls -dt /tmp/run_patch_builds.* | head -1)
timeout 120 "$BLD/1/bench/mla_bench" --mla_formats=fp8_e4m3fn_qfp8_mma --mla_iters=3 \
  --mla_shapes=bs128/kv4096/h16/q1,bs64/kv8192/h16/q1 --benchmark_filter=. \
  > "$OUT/checked_b.log" 2>&1
echo "checked B rc=$?"; grep -E '^\|' "$OUT/checked_b.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20
B16='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1'
for s in plain auto 4 8 16 32; do
  if [ $s = plain ]; then env=(); elif [ $s = auto ]; then env=(MLA_DECODE_STAGE1=wgmma);
  else env=(MLA_DECODE_STAGE1=wgmma MLA_DECODE_NUM_SPLITS=$s); fi
  env "${env[@]}" timeout 60 "$BLD/a/bench/mla_bench" --mla_formats=bf16 --mla_no_check \
    --mla_iters=20 --mla_shapes=$B16 --benchmark_filter=. > "$OUT/bf16_$s.log" 2>&1
  echo "bf16 $s rc=$?"; grep -E '^\|' "$OUT/bf16_$s.log" | cut -d'|' -f2,3,4,9,14,15,16 | tail -4
done
