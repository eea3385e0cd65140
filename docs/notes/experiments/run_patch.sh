#!/usr/bin/env bash
# One device call for a kernel experiment kept as a patch against the tree:
#   bash docs/notes/experiments/run_patch.sh PATCH [BENCH_FILTER]
# Run from the repository root on the GPU machine (the device tool's working directory), under a
# `timeout` of ~570 s; every log goes into one tarball under $OUT (the file-count limit holds):
#   1. builds the tree (A: mla_bench) and the patched tree (B: everything), in parallel;
#   2. A/B with bench/ab.py (2 rounds, fp8 e4m3fn, floors measured by every pass) on
#      BENCH_FILTER, by default the 14 cases the sixth and seventh sessions used (the eight
#      competition shapes, H16 q_len 2 / 4, H128 bs64 kv4096, bs1 kv65536; ~150 s);
#   3. B's whole GPU suite (-E install_: CI runs those) through tests/ctest_grouped.py with the
#      time left (~260 s on the H200 in the seventh session).
# Each step has its own timeout; a step cut short leaves what it wrote.
set -u
PATCH=$(realpath "$1")
F=${2:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q1/|bs1/kv65536/h16/q1/'}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda"
ROOT=$(pwd)
trap 'tar -czf "$OUT/run_patch.tgz" -C "$W" .' EXIT
rm -rf /tmp/src-b && mkdir -p /tmp/src-b
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/src-b
(cd /tmp/src-b && patch -p1 < "$PATCH") > "$W/patch.log" 2>&1 ||
  { echo "PATCH FAILED"; cat "$W/patch.log"; exit 1; }
(cmake -S "$ROOT" -B /tmp/b-a $CM && timeout 200 cmake --build /tmp/b-a -j6 --target mla_bench) \
  > "$W/build-a.log" 2>&1 &
(cmake -S /tmp/src-b -B /tmp/b-b $CM && timeout 250 cmake --build /tmp/b-b -j10) \
  > "$W/build-b.log" 2>&1 &
wait
[ -x /tmp/b-a/bench/mla_bench ] && [ -x /tmp/b-b/bench/mla_bench ] ||
  { echo "BUILD FAILED"; tail -30 "$W"/build-*.log; exit 1; }
echo "builds $SECONDS s"
timeout 250 python3 bench/ab.py --rounds 2 --csv "$W/ab.csv" /tmp/b-a/bench/mla_bench \
  /tmp/b-b/bench/mla_bench -- --mla_formats=fp8_e4m3fn --mla_extra --mla_iters=20 \
  "--benchmark_filter=$F" > "$W/ab.log" 2>&1
echo "ab rc=$? $SECONDS s"; tail -18 "$W/ab.log"
left=$((560 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left python3 "$ROOT/tests/ctest_grouped.py" --build /tmp/b-b -j 12 -E install_ \
    --log-dir "$W/suite" > "$W/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$W/suite.log" | head -20
fi
echo "total $SECONDS s"
