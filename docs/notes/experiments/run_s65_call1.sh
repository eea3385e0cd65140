#!/usr/bin/env bash
# Sixty-fifth session, one call on any GPU (~4 min): mma16 with 2 and 4 row groups a CTA
# (32 / 64 rows; Mma16Config::kGroups).
# (1) correctness: test_gpu, test_gpu_paths, test_gpu_input_forms with mma16 forced
#     (MLA_DECODE_STAGE1=mma16) at MLA_DECODE_ROWS=32 and 64;
# (2) timing: mma16 forced at 16, 32 and 64 rows (unchecked mla_bench, 20 calls, two rounds)
#     on the shapes of 32+ rows an element and a 16-row control, four formats; the 16-row side
#     is today's kernel shape.
# Logs in $OUT/s65_call1.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s65_call1
build_release "$L" "$B" || exit 1
for rows in 32 64; do
  for suite in test_gpu test_gpu_paths test_gpu_input_forms; do
    log="$L/$suite.rows$rows.log"
    MLA_DECODE_STAGE1=mma16 MLA_DECODE_ROWS=$rows timeout 150 "$B/tests/$suite" --gtest_brief=1 \
      > "$log" 2>&1
    echo "$suite rows$rows rc=$? $(grep -cE '^\[  FAILED' "$log") failed lines;" \
      "$(grep -E '^\[  PASSED|tests ran' "$log" | tr '\n' ' ') $SECONDS s"
  done
done
grep -h -A3 '^\[  FAILED' "$L"/*.rows*.log | head -40
shapes=bs64/kv4096/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4,bs128/kv4096/h16/q2
shapes+=,bs64/kv4096/h64/q1,bs32/kv8192/h32/q1,bs32/kv8192/h16/q1
mkdir -p "$L/rows"
for r in 1 2; do
  for rows in 16 32 64; do
    MLA_DECODE_STAGE1=mma16 MLA_DECODE_ROWS=$rows timeout 150 "$B/bench/mla_bench" \
      --mla_no_check --mla_iters=20 \
      --mla_formats=fp8_e4m3fn,bf16,mxfp4,fp8_e4m3fn_bf16_rope "--mla_shapes=$shapes" \
      "--mla_csv=$L/rows/r$rows.$r.csv" > "$L/rows/r$rows.$r.log" 2>&1 || echo "r$rows.$r rc=$?"
  done
  echo "round $r done $SECONDS s"
done
python3 - "$L/rows" <<'P'
import csv, sys, collections
d = sys.argv[1]
best = collections.defaultdict(dict)
for rows in (16, 32, 64):
    for r in (1, 2):
        for x in csv.DictReader(open(f"{d}/r{rows}.{r}.csv")):
            k = (x["kv_format"], x["bs"], x["kv_len"], x["heads"], x["q_len"])
            v = float(x["median_us"])
            if rows not in best[k] or v < best[k][rows][0]:
                best[k][rows] = (v, x["variant"], x["rows_per_cta"], x["splits"])
print("format bs kv heads q | rows16 | rows32 (x) | rows64 (x) | variant/rows/splits of each")
for k, v in best.items():
    a = v.get(16, (float("nan"),))[0]
    cells = [f"{v[r][0]:.1f}" + ("" if r == 16 else f" ({v[r][0] / a:.2f})") for r in (16, 32, 64) if r in v]
    print(" ".join(k), "|", " | ".join(cells), "|", " ".join(f"{v[r][1]}/{v[r][2]}/{v[r][3]}" for r in (16, 32, 64) if r in v))
P
echo "total $SECONDS s"
