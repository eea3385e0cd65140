#!/usr/bin/env bash
# Fifty-eighth session: tile 0 before the Q loads at 64 rows (exp_s58_tile0_first.patch, B1: the
# whole tree built) and no kQLoadsFirst at 64 rows (exp_s58_no_q_first.patch, B2: bench only)
# against the tree (A); A, B1, B2 in turn, two rounds; if B1's geomean is below 0.99, B1's whole
# GPU suite (~300 s, no carry).
#   bash docs/notes/experiments/run_s58_tile0.sh
# Other sides: MLA_B1_PATCH (whole tree, the suite if it wins), MLA_B2_PATCH (bench only),
# MLA_SHAPES, MLA_FORMATS; e.g. the next session's early tensor-map prefetch:
#   MLA_B1_PATCH=docs/notes/experiments/exp_s58_early_maps.patch \
#   MLA_B2_PATCH=docs/notes/experiments/exp_s58_early_maps.patch \
#   MLA_SHAPES=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,\
#   bs1/kv65536/h16/q1,bs64/kv4096/h128/q1 bash docs/notes/experiments/run_s58_tile0.sh
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s58_tile0
mkdir -p "$L/a" "$L/b2" "$L/ab1" "$L/ab2"
src=$(patched_copy "$L" "${MLA_B1_PATCH:-docs/notes/experiments/exp_s58_tile0_first.patch}") ||
  exit 1
build_bench "$L/a" > "$L/a/dir" &
build_bench "$L/b2" "${MLA_B2_PATCH:-docs/notes/experiments/exp_s58_no_q_first.patch}" \
  > "$L/b2/dir" &
(cd "$src" && build_release "$L" "$B") || exit 1
wait
A=$(cat "$L/a/dir"); B2=$(cat "$L/b2/dir")
[ -n "$A" ] && [ -n "$B2" ] || { echo "BUILD FAILED"; exit 1; }
echo "built $SECONDS s"
abb_bench "$L" "$A/bench/mla_bench" "$B/bench/mla_bench" "$B2/bench/mla_bench"
echo "== B1 = ${MLA_B1_PATCH:-tile 0 first}:"
python3 docs/notes/experiments/ab_min.py "$L/ab1" | tee "$L/ab1.txt"
echo "== B2 = ${MLA_B2_PATCH:-no kQLoadsFirst at 64 rows}:"
python3 docs/notes/experiments/ab_min.py "$L/ab2"
echo "timed $SECONDS s"
g=$(python3 - "$L/ab1.txt" <<'PY'
import math, sys
r = [float(l.split()[-1]) for l in open(sys.argv[1]) if l.split() and l.split()[-1][:1] in "01"]
print(f"{math.exp(sum(map(math.log, r)) / len(r)):.4f}" if r else "1")
PY
)
echo "B1 geomean $g"
if python3 -c "import sys; sys.exit(0 if float('$g') < 0.99 else 1)"; then
  left=$((560 - SECONDS)); [ $left -gt 240 ] && left=240
  timeout $left python3 "$src/tests/ctest_grouped.py" --build "$B" -j 12 -E install_ \
    --log-dir "$L/suite" > "$L/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -4
fi
echo "total $SECONDS s"
