#!/usr/bin/env bash
# Prepared in the fifty-sixth session, not run: exp_s56_reduce_split_parallel_loads.patch (the
# split-parallel reduce of 9-64 splits loads every split's partial row beside its LSEs, one round
# trip to L2 instead of two; predicted ~0.5 us off such plans). Like exp_s56_reduce_rows_early
# .patch it reads the unwritten rows of splits past an element's last: uneven batches (the
# kvuneven shapes below) and batch-invariant mode must be in its A/B, and it needs the same
# host gate before it lands. A = the tree, B = the tree with the patch (bench builds), two
# rounds; then a checked bench of B. Land it only after the whole suite ran on B.
#   bash docs/notes/experiments/run_s57_reduce_sp.sh        (no carry; ~150 s)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s57_reduce_sp
mkdir -p "$L/a" "$L/b"
(build_bench "$L/a" > "$L/a/dir") &
a_pid=$!
BB=$(build_bench "$L/b" docs/notes/experiments/exp_s56_reduce_split_parallel_loads.patch) || exit 1
wait $a_pid; AB=$(cat "$L/a/dir"); [ -x "$AB/bench/mla_bench" ] || { echo "A build failed"; exit 1; }
echo "both built $SECONDS s"
SHAPES=bs4/kv8192/h16/q1,bs1/kv4096/h16/q1,bs1/kv16384/h16/q1,bs2/kv16384/h16/q2,bs8/kv4096/h16/q1,bs1/kv65536/h16/q1,bs4/kv1024/h16/q1,bs64/kvuneven4096/h16/q1,bs100/kvuneven3000/h16/q1
ab_bench "$L" "$AB/bench/mla_bench" "$BB/bench/mla_bench" "$SHAPES" fp8_e4m3fn,bf16,mxfp4
python3 docs/notes/experiments/ab_min.py "$L"
timeout 60 "$BB/bench/mla_bench" --mla_iters=5 --mla_formats=fp8_e4m3fn,bf16,mxfp4 \
  "--mla_shapes=$SHAPES" "--mla_csv=$L/checked.csv" > "$L/checked.log" 2>&1
echo "checked bench rc=$? $SECONDS s"; grep -E "cases ran|FAILED" "$L/checked.log" | head
