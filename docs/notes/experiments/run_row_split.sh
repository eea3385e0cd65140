#!/usr/bin/env bash
# One device call for the row-split experiment (exp_row_split_64.patch, notes: "Sixth session").
# Run from the repository root on the GPU machine (the device tool's working directory), with a
# time limit of ~550 s; every log goes under $OUT (one tarball, so the file-count limit holds):
#   1. builds the tree (A) and the tree with the patch (B): mla_bench and test_gpu_paths each;
#   2. smoke test of B: the fp8 cases of every head count and the fp8-Q cases, forced to wgmma
#      (64 rows: H64, H128 and H16 q_len 4 take the row split);
#   3. A/B (bench/ab.py, 2 rounds) on the 64-row shapes and two 16-row controls, floors included;
#   4. only if 2 passed and time is left: B's whole GPU suite through tests/ctest_grouped.py
#      (needs a full build of B: ~60 s more).
# Each step has its own timeout; a step cut short leaves what it wrote.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda"
ROOT=$(pwd)
pack() { tar -czf "$OUT/row_split.tgz" -C "$W" . ; }
trap pack EXIT

rm -rf /tmp/src-b && mkdir -p /tmp/src-b
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/src-b
(cd /tmp/src-b && patch -p1 < docs/notes/experiments/exp_row_split_64.patch) > "$W/patch.log" 2>&1 ||
  { echo "PATCH FAILED"; cat "$W/patch.log"; exit 1; }
build() {  # source dir, build dir, targets...
  local src=$1 dir=$2; shift 2
  (cmake -S "$src" -B "$dir" $CM && timeout 200 cmake --build "$dir" -j8 --target "$@") \
    > "$W/build-$(basename "$dir").log" 2>&1
}
build "$ROOT" /tmp/b-a mla_bench & build /tmp/src-b /tmp/b-b mla_bench test_gpu_paths & wait
[ -x /tmp/b-a/bench/mla_bench ] && [ -x /tmp/b-b/tests/test_gpu_paths ] ||
  { echo "BUILD FAILED"; tail -30 "$W"/build-*.log; exit 1; }
echo "builds $SECONDS s"

F='AllFormats/GpuFormatHeads.*/fp8_e4m3fn_*:AllFormats/GpuFormatHeads.*/fp8_e4m3fnuz_*'
F="$F:Fp8Q/GpuFp8Query.*kv_fp8*"
(cd /tmp/b-b/tests && MLA_DECODE_STAGE1=wgmma timeout 120 ./test_gpu_paths --gtest_filter="$F") \
  > "$W/smoke.log" 2>&1
smoke=$?
echo "smoke rc=$smoke $SECONDS s"; grep -E "^\[  (PASSED|FAILED) " "$W/smoke.log" | head -20

C='--benchmark_filter=bs64/kv4096/h128/q1/iter|bs32/kv8192/h128/q1/iter|bs64/kv4096/h128/q2/iter'
C="$C|bs128/kv4096/h16/q4/iter|bs64/kv4096/h64/q1/iter|bs256/kv8192/h16/q1/iter|bs4/kv8192/h16/q1/iter"
timeout 200 python3 bench/ab.py --rounds 2 --csv "$W/ab_row_split.csv" /tmp/b-a/bench/mla_bench \
  /tmp/b-b/bench/mla_bench -- --mla_formats=fp8_e4m3fn --mla_extra --mla_iters=20 "$C" \
  > "$W/ab.log" 2>&1
echo "ab rc=$? $SECONDS s"; tail -12 "$W/ab.log"

if [ $smoke -eq 0 ] && [ $SECONDS -lt 250 ]; then
  timeout 60 cmake --build /tmp/b-b -j16 > "$W/build-b-all.log" 2>&1
  timeout $((520 - SECONDS)) python3 "$ROOT/tests/ctest_grouped.py" --build /tmp/b-b -j 12 \
    -E install_ --log-dir "$W/suite" > "$W/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; tail -20 "$W/suite.log"
fi
echo "total $SECONDS s"
