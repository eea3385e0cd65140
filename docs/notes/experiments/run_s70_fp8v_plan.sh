#!/usr/bin/env bash
# Seventieth session, call B (~4 min, no carry): the planner offering wgmma's MXFP4-key + fp8-V
# kernels unforced (hold dropped after run_s70_fp8v.sh; mma16's fixed cost for the format 4.0).
#  1. Build (build-dev/).
#  2. The MXFP4-K / fp8-V cases and the known answers unforced (the planner's plans: now wgmma),
#     with .stage1_wgmma_rows* again.
#  3. A checked mla_bench of both V flavours as planned (competition shapes, engine shapes).
#  4. Small and off-grid shapes, e4m3fn V, unchecked: as planned, mma16 forced, wgmma at 16 /
#     32 rows forced.
# Ends by 560 s. Logs in $OUT/s70_fp8v_plan.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s70_fp8v_plan
B=$PWD/build-dev
build_release "$L" "$B" || exit 1
(cd "$B" && timeout 150 ctest -j 12 --timeout 120 \
   -R '(mxfp4_k_fp8.*|GpuVectors\..*)(\.stage1_wgmma_rows(16|32|64))?$' \
   -E '\.(stage1_mma16.*|stage1_wgmma|one_split|nopdl|notma.*)$' > "$L/tests.log" 2>&1)
echo "tests rc=$? $SECONDS s"; grep -E 'tests passed|Failed|\*\*\*|Timeout' "$L/tests.log" | head -20
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/'
timeout 150 "$B/bench/mla_bench" --mla_extra --mla_iters=20 \
  --mla_formats=mxfp4k_fp8v_e4m3fn,mxfp4k_fp8v_e4m3fnuz "--benchmark_filter=$F" \
  "--mla_csv=$L/plan.csv" > "$L/plan.log" 2>&1
echo "plan rc=$? $SECONDS s"
grep -E '^\| *mxfp4' "$L/plan.log" | cut -d'|' -f2,3,4,9,10,14,15,16,20
S=bs1/kv200/h16/q1,bs1/kv200/h8/q2,bs16/kv200/h16/q1,bs1/kv65536/h16/q1,bs8/kv3000/h64/q1
S+=,bs100/kv1500/h32/q3,bs48/kv2048/h16/q1,bs4/kv1024/h16/q1
for m in plan mma16 r16 r32; do
  case $m in plan) E=(MLA_X=1) ;; mma16) E=(MLA_DECODE_STAGE1=mma16) ;;
    *) E=(MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=${m#r}) ;; esac
  left=$((560 - SECONDS)); [ $left -gt 15 ] || break
  env "${E[@]}" timeout $left "$B/bench/mla_bench" --mla_formats=mxfp4k_fp8v_e4m3fn \
    "--mla_shapes=$S" --mla_iters=20 --mla_no_check "--mla_csv=$L/small_$m.csv" \
    > "$L/small_$m.log" 2>&1
  echo "== small $m rc=$? $SECONDS s"
  grep -E '^\| *mxfp4' "$L/small_$m.log" | cut -d'|' -f3,4,14,15,16
done
echo "total $SECONDS s"
