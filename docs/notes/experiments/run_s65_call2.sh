#!/usr/bin/env bash
# Sixty-fifth session, second call on any GPU (~5 min): call 1 (run_s65_call1.sh) passed its
# forced-rows suites but ran past the limit before its timing. Here:
# (1) timing: mma16 forced at 16, 32 and 64 rows (unchecked mla_bench, 20 calls, one round) on
#     five shapes, four formats; then the planner's own plans on the same (B = default);
# (2) test_gpu_paths with mma16 forced at 64 rows (call 1's missing suite), bounded.
# Logs in $OUT/s65_call2.tgz; the summary is printed as it goes.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s65_call2
build_release "$L" "$B" || exit 1
shapes=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4,bs128/kv4096/h16/q2,bs32/kv8192/h32/q1
shapes+=,bs32/kv8192/h16/q1
mkdir -p "$L/rows"
for rows in 16 32 64 plan; do
  env=(MLA_DECODE_STAGE1=mma16 MLA_DECODE_ROWS=$rows); [ $rows = plan ] && env=()
  env "${env[@]}" timeout 100 "$B/bench/mla_bench" --mla_no_check --mla_iters=20 \
    --mla_formats=fp8_e4m3fn,bf16,mxfp4,fp8_e4m3fn_bf16_rope "--mla_shapes=$shapes" \
    "--mla_csv=$L/rows/r$rows.csv" > "$L/rows/r$rows.log" 2>&1 || echo "r$rows rc=$?"
  echo "rows $rows done $SECONDS s"
done
python3 - "$L/rows" <<'P'
import csv, sys, collections, os
d = sys.argv[1]
best = collections.defaultdict(dict)
for rows in ("16", "32", "64", "plan"):
    f = f"{d}/r{rows}.csv"
    if not os.path.exists(f): continue
    for x in csv.DictReader(open(f)):
        k = (x["kv_format"], x["bs"], x["kv_len"], x["heads"], x["q_len"])
        best[k][rows] = (float(x["median_us"]), x["variant"], x["rows_per_cta"], x["splits"])
print("format bs kv heads q | mma16 rows16 | rows32 (x16) | rows64 (x16) | plan | v/rows/splits")
for k, v in best.items():
    a = v.get("16", (float("nan"),))[0]
    cells = [f"{v[r][0]:.1f}" + ("" if r == "16" else f" ({v[r][0] / a:.2f})") for r in v]
    print(" ".join(k), "|", " | ".join(cells), "|", " ".join(f"{v[r][1]}/{v[r][2]}/{v[r][3]}" for r in v))
P
log="$L/test_gpu_paths.rows64.log"
MLA_DECODE_STAGE1=mma16 MLA_DECODE_ROWS=64 timeout 130 "$B/tests/test_gpu_paths" --gtest_brief=1 \
  > "$log" 2>&1
echo "test_gpu_paths rows64 rc=$? $(grep -E '^\[  PASSED|tests ran' "$log" | tr '\n' ' ')"
grep -A3 '^\[  FAILED' "$log" | head -30
echo "total $SECONDS s"
