#!/usr/bin/env bash
# Sixtieth session, call 1: (1) wgmma_rate_probe.cu (the tensor rate of stage 1's wgmma shapes,
# ~5 s); (2) queue item 0-s59 (4): exp_s59_q_prologue_shared.patch (the two Q prologues' shared
# steps as helpers, behaviour unchanged), A (the tree) against B (the patch) on the Q prologue's
# shapes and formats, two rounds, then B's whole GPU suite whatever the A/B says (a refactor
# lands only with both). ~300 s, no carry.
#   bash docs/notes/experiments/run_s60_call1.sh
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s60_call1
P=docs/notes/experiments/exp_s59_q_prologue_shared.patch
mkdir -p "$L/a" "$L/ab"
(nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -o /tmp/wgmma_rate_probe \
  docs/notes/experiments/wgmma_rate_probe.cu > "$L/probe_build.log" 2>&1) &
probe_pid=$!
src=$(patched_copy "$L" "$P") || exit 1
build_bench "$L/a" > "$L/a/dir" &
(cd "$src" && build_release "$L" "$B") || exit 1
wait
A=$(cat "$L/a/dir"); [ -n "$A" ] || { echo "A BUILD FAILED"; exit 1; }
echo "built $SECONDS s"
if [ -x /tmp/wgmma_rate_probe ]; then
  timeout 60 /tmp/wgmma_rate_probe > "$L/probe.txt" 2>&1; echo "probe rc=$?"; cat "$L/probe.txt"
else
  echo "probe build failed"; tail -5 "$L/probe_build.log"
fi
ab_bench "$L/ab" "$A/bench/mla_bench" "$B/bench/mla_bench" \
  bs4/kv1024/h16/q1,bs64/kv1024/h16/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4,bs64/kv4096/h128/q1 \
  fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,bf16,mxfp4
python3 docs/notes/experiments/ab_min.py "$L/ab" | tee "$L/ab.txt"
echo "timed $SECONDS s"
left=$((570 - SECONDS)); [ $left -gt 260 ] && left=260
timeout $left python3 "$src/tests/ctest_grouped.py" --build "$B" -j 12 -E install_ \
  --log-dir "$L/suite" > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
echo "total $SECONDS s"
