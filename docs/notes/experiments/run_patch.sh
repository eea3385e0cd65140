#!/usr/bin/env bash
# One device call for kernel experiments kept as patches against the tree:
#   bash docs/notes/experiments/run_patch.sh PATCH [PATCH2 ...]
# Run from the repository root on the GPU machine (the device tool's working directory), under a
# `timeout` of ~570 s; every log goes into one tarball under $OUT (the file-count limit holds):
#   1. builds the tree (A: mla_bench), the tree with PATCH (B: everything) and with each further
#      patch (C, D, ...: mla_bench), in parallel;
#   2. one A/B/C... with bench/ab.py (2 rounds; the formats in $MLA_AB_FORMATS, fp8_e4m3fn
#      unless set; floors measured by every pass; each side against A, the order rotating each
#      round) on $MLA_AB_FILTER, by default the 14 cases of the sixth and seventh sessions (the
#      eight competition shapes, H16 q_len 2 / 4, H128 bs64 kv4096, bs1 kv65536): ~150 s for
#      two sides, ~215 s for three;
#   3. B's whole GPU suite (-E install_: CI runs those) through tests/ctest_grouped.py with the
#      time left (~260 s on the H200 in the seventh session).
# Each step has its own timeout; a step cut short leaves what it wrote.
set -u
[ $# -ge 1 ] || { echo "usage: $0 PATCH [PATCH2 ...]"; exit 2; }
FORMATS=${MLA_AB_FORMATS:-fp8_e4m3fn}
F=${MLA_AB_FILTER:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q1/|bs1/kv65536/h16/q1/'}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda"
ROOT=$(pwd)
trap 'tar -czf "$OUT/run_patch.tgz" -C "$W" .' EXIT
(cmake -S "$ROOT" -B /tmp/b-a $CM && timeout 200 cmake --build /tmp/b-a -j4 --target mla_bench) \
  > "$W/build-a.log" 2>&1 &
sides=(/tmp/b-a/bench/mla_bench); n=0
for patch in "$@"; do
  n=$((n + 1)); src=/tmp/src-$n; bld=/tmp/b-$n
  rm -rf "$src" && mkdir -p "$src"
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src"
  (cd "$src" && patch -p1 < "$(realpath -e "$ROOT/$patch" 2>/dev/null || echo "$patch")") \
    > "$W/patch-$n.log" 2>&1 ||
    { echo "PATCH $patch FAILED"; cat "$W/patch-$n.log"; exit 1; }
  target=$([ $n -eq 1 ] && echo all || echo mla_bench)
  (cmake -S "$src" -B "$bld" $CM && timeout 250 cmake --build "$bld" -j8 --target $target) \
    > "$W/build-$n.log" 2>&1 &
  sides+=("$bld/bench/mla_bench")
  echo "side $n: $patch" | tee -a "$W/sides.txt"
done
wait
for s in "${sides[@]}"; do
  [ -x "$s" ] || { echo "BUILD FAILED: $s"; tail -30 "$W"/build-*.log; exit 1; }
done
echo "builds $SECONDS s"
timeout 300 python3 bench/ab.py --rounds 2 --csv "$W/ab.csv" "${sides[@]}" -- \
  "--mla_formats=$FORMATS" --mla_extra --mla_iters=20 "--benchmark_filter=$F" > "$W/ab.log" 2>&1
echo "ab rc=$? $SECONDS s"; tail -18 "$W/ab.log"
left=$((560 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left python3 "$ROOT/tests/ctest_grouped.py" --build /tmp/b-1 -j 12 -E install_ \
    --log-dir "$W/suite" > "$W/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$W/suite.log" | head -20
fi
echo "total $SECONDS s"
