#!/usr/bin/env bash
# Seventieth session, call A (~6 min, no carry needed; build-peers, when carried, starts
# FlashMLA's build for a later call on the same warm machine): wgmma's kernels of MXFP4 keys
# beside a separate fp8 V cache (WgmmaMxfp4Fp8VDecode, held from the planner) on a GPU.
#  1. The library built in build-dev/ (kept on a warm machine for run_s70_call1.sh's reuse).
#  2. Their GPU tests: every MXFP4-K / fp8-V case with wgmma forced at the planner's rows
#     (.stage1_wgmma) and at 16 / 32 / 64 rows (.stage1_wgmma_rows*), the known answers at each
#     row count, and the same cases unforced (mma16: the planner holds wgmma back).
#  3. A checked mla_bench of both V flavours, 20 calls a case: the competition shapes and the
#     target rows' engine shapes, as planned (mma16) and with wgmma forced; then e4m3fn V with
#     wgmma forced at 16, 32 and 64 rows on the engine shapes (the cost figures' fit).
# Everything ends by 560 s: run under `timeout 590`. Logs in $OUT/s70_fp8v.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s70_fp8v
B=$PWD/build-dev
start_builds "$L" "$B"
wait $lib_pid || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "library built $SECONDS s"
grep -E 'spill|error' "$L/build.log" | head -5
(cd "$B" && timeout 200 ctest -j 12 --timeout 120 \
   -R '(mxfp4_k_fp8.*|GpuVectors\..*)(\.stage1_wgmma(_rows(16|32|64))?)?$' \
   -E '\.(stage1_mma16.*|one_split|nopdl|notma.*)$' > "$L/tests.log" 2>&1)
echo "tests rc=$? $SECONDS s"; grep -E 'tests passed|Failed|\*\*\*|Timeout' "$L/tests.log" | head -20
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/'
bench() {  # NAME [ENV=VALUE ...] -- [mla_bench arguments]
  local name=$1; shift
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local left=$((560 - SECONDS)); [ $left -gt 15 ] || { echo "$name: no time left"; return; }
  env "${envs[@]}" timeout $left "$B/bench/mla_bench" --mla_extra --mla_iters=20 \
    "--mla_csv=$L/$name.csv" "$@" > "$L/$name.log" 2>&1
  echo "$name rc=$? $SECONDS s"
  grep -E '^\| *mxfp4' "$L/$name.log" | cut -d'|' -f2,3,4,9,10,14,15,16,20
}
bench plan MLA_X=1 -- --mla_formats=mxfp4k_fp8v_e4m3fn,mxfp4k_fp8v_e4m3fnuz "--benchmark_filter=$F"
bench wgmma MLA_DECODE_STAGE1=wgmma -- --mla_formats=mxfp4k_fp8v_e4m3fn,mxfp4k_fp8v_e4m3fnuz \
  "--benchmark_filter=$F"
E='bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q1/|bs(32|256)/kv8192/h16/q1/it'
for r in 16 32 64; do
  bench rows$r MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$r -- --mla_formats=mxfp4k_fp8v_e4m3fn \
    "--benchmark_filter=$E" --mla_no_check
done
echo "total $SECONDS s"
