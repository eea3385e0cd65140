#!/usr/bin/env bash
# Seventieth session, call 1 (~9 min, carry build-peers; meant for the H200): queue 0-s69 (1).
# The library (0.7.43) and FlashMLA 9edee0c built in parallel; a checked mla_bench, 30 calls a
# case, of fp8 e4m3fn, fp8 Q on the e4m3 MMA, bf16, MXFP4 and both bf16-rope flavours over the
# competition shapes and the target rows' engine shapes; then bench/compare_peers.py beside
# FlashMLA (one process) on fp8 e4m3fn: the default grid, then the 20 off-grid shapes.
# Everything ends by 560 s: run under `timeout 590`. Logs in $OUT/s70_call1.tgz. (FlashMLA's
# build is skipped where /tmp/flashmla already imports: build_flashmla.sh.)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s70_call1
B=$PWD/build-dev  # run_s70_fp8v.sh's on a warm machine (an incremental build), else fresh
start_builds "$L" "$B"
wait $lib_pid || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "library built $SECONDS s"
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/'
timeout 250 "$B/bench/mla_bench" --mla_extra --mla_iters=30 \
  --mla_formats=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,bf16,mxfp4,fp8_e4m3fn_bf16_rope,fp8_e4m3fnuz_bf16_rope \
  "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" > "$L/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"
grep -E '^\| *(fp8|bf16|mxfp4)' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,11,14,15,16,20
grep -iE 'geomean' "$L/mla_bench.log" | head -14
[ -n "$fm_pid" ] || { echo "no build-peers/: FlashMLA not timed"; exit 0; }
wait $fm_pid; echo "flashmla build rc=$? $SECONDS s"; tail -3 "$L/flashmla_build.log"
peers() {  # NAME [compare_peers.py arguments]
  local name=$1 left=$((560 - SECONDS)); shift
  [ $left -gt 10 ] || { echo "$name: no time left"; return; }
  PYTHONUNBUFFERED=1 PYTHONPATH=python timeout $left python3 bench/compare_peers.py \
    --lib "$B/src/libmla_decode.so" --flashmla /tmp/flashmla --formats fp8_e4m3fn "$@" \
    --csv "$L/$name.csv" > "$L/$name.log" 2>&1
  echo "$name compare_peers rc=$? $SECONDS s"; tail -32 "$L/$name.log"
}
peers compare_peers
peers offgrid --shapes "$(tr '\n' ';' < docs/notes/experiments/offgrid_shapes.txt | sed 's/;$//')"
echo "total $SECONDS s"
