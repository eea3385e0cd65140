#!/usr/bin/env bash
# One device call: where the time of a split count goes, stage 1 against the reduce, by
# Nsight Compute's kernel durations (not the SPEC method: ncu serializes the kernels, flushes
# the caches before each and locks the clocks, so PDL's overlap and the launch gaps are out):
#   bash docs/notes/experiments/run_split_costs.sh [PATCH]     (no PATCH: the tree as it is)
# Run on the GPU machine under a `timeout`; cases in $MLA_SPLIT_CASES as FORMAT:SHAPE:SPLITS
# (SPLITS a comma list, forced through MLA_DECODE_NUM_SPLITS; "auto" for the plan's own), by
# default the twenty-second session's open questions: bs1 kv16384 H16 at 64 and 128 splits
# (128 cost ~7 us more than the halved walk saved) and MXFP4 bs1 kv131072 H64 at its plan's 64
# (the new reduce 4.5 % slower there; apply a patch with the old reduce to compare). Prints,
# per case and count, the median duration of each kernel over 3 calls; logs in
# $OUT/split_costs.tgz. ~15 s to build, ~5 s a case and count.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
trap 'tar -czf "$OUT/split_costs.tgz" -C "$W" .' EXIT
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)  # this script is docs/notes/experiments/...
cd "$ROOT" || exit 1
. docs/notes/experiments/build_bench.sh
B=$(build_bench "$W" "${1:-}") || exit 1
echo "build $SECONDS s"
CASES=${MLA_SPLIT_CASES:-"fp8_e4m3fn:bs1/kv16384/h16/q1:64,128 mxfp4:bs1/kv16384/h16/q1:64,128 mxfp4:bs1/kv131072/h64/q1:auto"}
printf '%-14s %-22s %6s %12s %12s\n' format shape splits stage1_us reduce_us
for c in $CASES; do
  IFS=: read -r f shape counts <<< "$c"
  for s in ${counts//,/ }; do
    n="${f}_$(echo "$shape" | tr / _)_$s"
    env_splits=(); [ "$s" != auto ] && env_splits=(MLA_DECODE_NUM_SPLITS="$s")
    env "${env_splits[@]}" timeout 120 ncu --kernel-name "regex:stage1|reduce" --launch-skip 2 \
      --launch-count 6 --metrics gpu__time_duration.sum --csv "$B/bench/mla_bench" \
      "--mla_formats=$f" "--mla_shapes=$shape" --mla_iters=3 --mla_no_check \
      > "$W/$n.csv" 2> "$W/$n.log"
    python3 - "$W/$n.csv" "$f" "$shape" "$s" <<'EOF'
import csv, statistics, sys
rows = []
for r in csv.reader(open(sys.argv[1])):  # the benchmark's own output lines are mixed in
    while r and r[-1] == "":
        r = r[:-1]  # a trailing comma
    if len(r) > 14 and r[-3] == "gpu__time_duration.sum":
        rows.append(r)
t = {"stage1": [], "reduce": []}
for r in rows:
    name, unit, value = r[4], r[-2], float(r[-1].replace(",", ""))
    us = value * {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3,
                  "msecond": 1e3}.get(unit, float("nan"))
    t["reduce" if "reduce" in name else "stage1"].append(us)
med = {k: (statistics.median(v) if v else float("nan")) for k, v in t.items()}
print("%-14s %-22s %6s %12.2f %12.2f" % (sys.argv[2], sys.argv[3], sys.argv[4],
                                          med["stage1"], med["reduce"]))
EOF
  done
done
echo "total $SECONDS s"
