#!/usr/bin/env bash
# Fifty-sixth session: the reduce's partial rows loaded beside the LSEs (one round trip to L2,
# not two; exp_s56_reduce_loads.patch, which was in the tree when this ran (call 3); it was
# withdrawn afterwards: `git apply` it first to rerun). Builds the tree (B) and the tree without
# it (A, the patch reversed, bench only), times the split shapes of 2-8 splits (three formats,
# A and B alternating, twice), runs a checked bench of B and the whole GPU suite (grouped).
#   bash docs/notes/experiments/run_s56_reduce_ab.sh       (no carry; ~270 s)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s56_reduce_ab
mkdir -p "$L/a"
(build_bench "$L/a" docs/notes/experiments/exp_s56_reduce_loads.patch -R > "$L/a/dir") &
a_pid=$!
build_release "$L" "$B" || exit 1
wait $a_pid; AB=$(cat "$L/a/dir"); [ -x "$AB/bench/mla_bench" ] || { echo "A build failed"; exit 1; }
echo "both built $SECONDS s"
SHAPES=bs4/kv1024/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv8192/h16/q1,bs4/kv8192/h16/q1
ab_bench "$L" "$AB/bench/mla_bench" "$B/bench/mla_bench" "$SHAPES" fp8_e4m3fn,bf16,mxfp4
python3 docs/notes/experiments/ab_min.py "$L"
echo "timed $SECONDS s"
timeout 60 "$B/bench/mla_bench" --mla_iters=5 --mla_formats=fp8_e4m3fn,bf16,mxfp4 \
  "--mla_shapes=$SHAPES,bs1/kv65536/h16/q1,bs8/kv8192/h64/q2" "--mla_csv=$L/checked.csv" \
  > "$L/checked.log" 2>&1
echo "checked bench rc=$? $SECONDS s"; grep -E "cases ran|FAILED" "$L/checked.log" | head
timeout 220 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ \
  --log-dir "$L/suite" > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
