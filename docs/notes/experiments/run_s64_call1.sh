#!/usr/bin/env bash
# Sixty-fourth session, one call on any GPU (~2 min; ~5 min on an H200, carry ["out/v020"]):
# (1) today's mma16 (every AMD and sm_80 / sm_89 plan: 16 rows a CTA) forced
#     (MLA_DECODE_STAGE1=mma16) beside the planner's plan on the 64-row shapes and one 16-row
#     control, fp8 e4m3fn with bf16 Q and MXFP4, two rounds (ab_min.py: B / A = mma16 / plan);
# (2) on an H200 only, the 0.2.0 comparison of run_v020_offgrid.sh (queue 0-s64 (1)).
# Logs in $OUT/s64_call1.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s64_call1
h200=0; grep -q H200 "$L/gpu.txt" && [ -f out/v020/src.tar.gz ] && h200=1
[ $h200 = 1 ] && v020_build
build_release "$L" "$B" mla_bench || exit 1
shapes=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4,bs64/kv4096/h128/q2,bs32/kv8192/h16/q1
mkdir -p "$L/mma16"
for r in 1 2; do
  for side in A B; do
    env=(); [ $side = B ] && env=(MLA_DECODE_STAGE1=mma16)
    env "${env[@]}" timeout 150 "$B/bench/mla_bench" --mla_no_check --mla_iters=20 \
      --mla_formats=fp8_e4m3fn,mxfp4 "--mla_shapes=$shapes" \
      "--mla_csv=$L/mma16/$side$r.csv" > "$L/mma16/$side$r.log" 2>&1 || echo "$side$r rc=$?"
    echo "$side$r done $SECONDS s"
  done
done
python3 docs/notes/experiments/ab_min.py "$L/mma16"
python3 - "$L/mma16" <<'P'
import csv, sys
for side in ("A1", "B1"):
    for r in csv.DictReader(open(f"{sys.argv[1]}/{side}.csv")):
        print(side, r["kv_format"], r["bs"], r["kv_len"], r["heads"], r["q_len"], r["median_us"],
              r["variant"], r["rows_per_cta"], r["splits"])
P
if [ $h200 = 1 ]; then
  wait $vpid || { echo "0.2.0 BUILD FAILED"; tail -20 "$L/v020_build.log"; exit 1; }
  v020_offgrid "$B" 2 "${MLA_ROUND2_BEFORE:-420}"
fi
echo "total $SECONDS s"
