#!/usr/bin/env bash
# Sixty-ninth session, call 4 (~7 min on an H100, no carry): 0.7.43 (the e4m3fnuz rope on wgmma
# offered by the planner, the argument checks) through the whole GPU suite (run_suite: every
# forced-variant registration), then the e4m3fnuz rope's planned rows on three H16 q_len 1
# shapes (30 calls, checked). Logs in $OUT/s69_call4.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s69_call4
build_release "$L" "$B" || exit 1
run_suite "$L" "$B" 480
timeout 60 "$B/bench/mla_bench" --mla_extra --mla_formats=fp8_e4m3fnuz_bf16_rope --mla_iters=30 \
  --mla_shapes=bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1 \
  "--mla_csv=$L/plan.csv" > "$L/plan.log" 2>&1
echo "== plan rc=$? $SECONDS s"
grep -E '^\| *fp8' "$L/plan.log" | cut -d'|' -f2,3,4,9,14,15,16,20
echo "total $SECONDS s"
