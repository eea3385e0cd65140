#!/usr/bin/env bash
# Fifty-seventh session: the reduce's partial rows beside its LSEs, gated on the host
# (Params::reduce_rows_early; exp_s57_reduce_rows_early.patch, in the tree when this ran: B).
# A = the tree with the patch reversed (bench only). Times uniform split shapes and uneven
# batches (empty splits: their rows written as zeros and read for nothing) in the default mode
# (two rounds, A / B alternating) and in batch-invariant mode (gate off: one round), runs a
# checked bench of B, B's whole GPU suite (grouped; the tests' workspaces poisoned), then
# compute-sanitizer initcheck + memcheck over the uneven-length cases with the workspace left
# unset (MLA_TEST_WORKSPACE_UNSET=1).
#   bash docs/notes/experiments/run_s57_reduce_early.sh       (no carry; ~450 s)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s57_reduce_early
mkdir -p "$L/a" "$L/inv"
(build_bench "$L/a" docs/notes/experiments/exp_s57_reduce_rows_early.patch -R > "$L/a/dir") &
a_pid=$!
build_release "$L" "$B" || exit 1
wait $a_pid; AB=$(cat "$L/a/dir"); [ -x "$AB/bench/mla_bench" ] || { echo "A build failed"; exit 1; }
echo "both built $SECONDS s"
UNIFORM=bs4/kv1024/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs4/kv8192/h16/q1
UNIFORM=$UNIFORM,bs2/kv16384/h16/q2,bs8/kv4096/h16/q1
UNEVEN=bs60/kvuneven4096/h16/q1,bs100/kvuneven3000/h16/q1,bs16/kvuneven16384/h16/q1
UNEVEN=$UNEVEN,bs24/kvuneven1024/h16/q1
ab_bench "$L" "$AB/bench/mla_bench" "$B/bench/mla_bench" "$UNIFORM,$UNEVEN" fp8_e4m3fn,bf16,mxfp4
python3 docs/notes/experiments/ab_min.py "$L"
echo "timed $SECONDS s"
for side in A B; do
  bin=$B/bench/mla_bench; [ $side = A ] && bin=$AB/bench/mla_bench
  timeout 60 "$bin" --mla_no_check --mla_iters=30 --mla_batch_invariant \
    --mla_formats=fp8_e4m3fn,bf16 "--mla_shapes=$UNEVEN,bs4/kv1024/h16/q1" \
    "--mla_csv=$L/inv/${side}1.csv" > "$L/inv/${side}1.log" 2>&1 || echo "inv $side rc=$?"
done
python3 - "$L/inv" <<'PY'
import csv, sys
d = sys.argv[1]
rows = {s: {(x["kv_format"], x["bs"], x["kv_len"]): x for x in csv.DictReader(open(f"{d}/{s}1.csv"))}
        for s in "AB"}
print("batch-invariant mode (gate off), us: format bs kv | A B B/A | its splits")
for k in sorted(rows["A"]):
    a = float(rows["A"][k]["batch_invariant_median_us"] or "nan")
    b = float(rows["B"].get(k, {}).get("batch_invariant_median_us") or "nan")
    print(k, f"{a:.2f} {b:.2f} {b / a:.3f}", rows["A"][k]["batch_invariant_splits"])
PY
timeout 60 "$B/bench/mla_bench" --mla_iters=5 --mla_formats=fp8_e4m3fn,bf16,mxfp4 \
  "--mla_shapes=$UNIFORM,$UNEVEN" "--mla_csv=$L/checked.csv" > "$L/checked.log" 2>&1
echo "checked bench rc=$? $SECONDS s"; grep -E "cases ran|FAILED" "$L/checked.log" | head
left=$((520 - SECONDS)); [ $left -gt 240 ] && left=240
timeout $left python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ \
  --log-dir "$L/suite" > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
left=$((570 - SECONDS))
if [ $left -gt 30 ]; then
  MLA_TEST_WORKSPACE_UNSET=1 MLA_SANITIZE_TIMEOUT=$((left / 2)) OUT=$L \
    bash docs/notes/experiments/run_sanitize.sh "$B" \
    'AllFormats/GpuFormatHeads.UnevenLengths/*:AllFormats/GpuFormatHeads.Mixed*' initcheck memcheck
  grep -h "route" "$L/sanitize-initcheck.log" | grep -o "splits=[0-9]*" | sort | uniq -c
fi
echo "total $SECONDS s"
