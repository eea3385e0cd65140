#!/usr/bin/env bash
# One device call: Nsight Compute (--set full, SASS source page) of a kernel experiment's stage 1:
#   bash docs/notes/experiments/ncu_patch.sh [PATCH]      (no PATCH: the tree as it is)
# Run on the GPU machine under a `timeout`; cases in $MLA_NCU_CASES (default the 64-row H128
# case), format in $MLA_NCU_FORMAT (fp8_e4m3fn unless set). Builds mla_bench (~15 s), profiles
# the second stage-1 launch of each case (~10 s each), and leaves under $OUT one tarball with,
# per case, bench/ncu_sass_summary.py's summary, the source page (SASS, CSV) and the details
# page. Ninth session: 25 s for one case. $MLA_NCU_KERNEL: another kernel-name regex
# (stage1_mma16 for the warp-level variant). Cases are shape tags (bench/shape_tag.h, e.g.
# bs64/kv4096/h128/q1/page16), run by --mla_shapes (since the twenty-ninth session; before, a
# --benchmark_filter over --mla_extra's shapes). $MLA_NCU_OPTS: more ncu options, e.g.
# "--clock-control none" (ncu locks the clocks to base unless told).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
pack() {
  tar -czf "$OUT/ncu_patch.tgz.tmp" -C "$W" . && mv "$OUT/ncu_patch.tgz.tmp" "$OUT/ncu_patch.tgz"
}
trap pack EXIT
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)  # this script is docs/notes/experiments/ncu_patch.sh
cd "$ROOT" || exit 1
F=${MLA_NCU_FORMAT:-fp8_e4m3fn}
. docs/notes/experiments/build_bench.sh
B=$(build_bench "$W" "${1:-}") || exit 1
echo "build $SECONDS s"
for c in ${MLA_NCU_CASES:-bs64/kv4096/h128/q1}; do
  n=$(echo "$c" | tr / _)
  # shellcheck disable=SC2086  # $MLA_NCU_OPTS: extra ncu options, split on spaces
  timeout 120 ncu --kernel-name "regex:${MLA_NCU_KERNEL:-stage1_wgmma}" --launch-skip 1 \
    --launch-count 1 --set full ${MLA_NCU_OPTS:-} \
    --import-source no -o "$W/$n" "$B/bench/mla_bench" "--mla_formats=$F" "--mla_shapes=$c" \
    --mla_iters=2 --mla_no_check > "$W/$n.log" 2>&1
  ncu -i "$W/$n.ncu-rep" --page source --csv --print-source sass > "$W/$n.sass.csv" 2>/dev/null
  ncu -i "$W/$n.ncu-rep" --page details --csv > "$W/$n.details.csv" 2>/dev/null
  python3 bench/ncu_sass_summary.py "$W/$n.sass.csv" --top 30 > "$W/$n.summary" 2>&1
  rm -f "$W/$n.ncu-rep"
  echo "== $c $SECONDS s"; head -40 "$W/$n.summary"
  grep -E '"(Duration|Elapsed Cycles|Executed Ipc Active|Issue Slots Busy|L2 Hit Rate)"' \
    "$W/$n.details.csv" | head -8 | cut -c1-220
  pack
done
echo "total $SECONDS s"
