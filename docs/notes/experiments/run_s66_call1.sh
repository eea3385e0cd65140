#!/usr/bin/env bash
# Sixty-sixth session, call 1 (~6-7 min on any GPU, no carry): the e4m3fn + bf16-rope format on
# wgmma (WgmmaFp8Bf16RopeDecode, 0.7.40).
# (1) the rope tests but mma16's forced ones (plain, wgmma forced, wgmma at forced rows);
# (2) timing, unchecked, 20 calls: the rope format with wgmma forced (the planner's rows), mma16
#     forced (the 0.7.39 plan; the plain plan while stage1_offered_unforced holds wgmma back), and
#     wgmma forced at 16 / 32 / 64 rows, beside fp8 e4m3fn under the same settings;
# (3) a checked mla_bench of the rope format, wgmma forced, over the default and engine shapes;
# (4) compute-sanitizer (memcheck at 64 and 32 rows, racecheck at 64 and 16, synccheck at 16) over
#     two rope cases with wgmma forced.
# MLA_LITE=1: no checked bench, no forced-rows timing, memcheck alone (~3 min). Logs in $OUT/s66_call1.tgz; the summary is printed as it goes.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s66_call1
build_release "$L" "$B" || exit 1
(cd "$B" && timeout 240 ctest -R "Rope" -E "stage1_mma16" -j 12 --timeout 120 > "$L/ctest_rope.log" 2>&1)
echo "ctest rope rc=$? $SECONDS s: $(grep -E 'tests passed|tests failed' "$L/ctest_rope.log")"
grep -E '^\s+[0-9]+ - ' "$L/ctest_rope.log" | head -20
shapes=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4,bs128/kv4096/h16/q2,bs32/kv8192/h32/q1
shapes+=,bs32/kv8192/h16/q1,bs256/kv8192/h16/q1,bs4/kv8192/h16/q1
mkdir -p "$L/t"
run() {  # name env...
  local name=$1; shift
  env "$@" timeout 100 "$B/bench/mla_bench" --mla_no_check --mla_iters=20 \
    --mla_formats=fp8_e4m3fn_bf16_rope,fp8_e4m3fn "--mla_shapes=$shapes" \
    "--mla_csv=$L/t/$name.csv" > "$L/t/$name.log" 2>&1 || echo "$name rc=$?"
}
run wgmma MLA_DECODE_STAGE1=wgmma
run mma16 MLA_DECODE_STAGE1=mma16
[ "${MLA_LITE:-0}" = 1 ] || for rows in 16 32 64; do
  run w$rows MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows
done
echo "timing done $SECONDS s"
python3 - "$L/t" <<'P'
import csv, sys, collections, os
d = sys.argv[1]
t = collections.defaultdict(dict)
names = ("wgmma", "mma16", "w16", "w32", "w64")
for n in names:
    f = f"{d}/{n}.csv"
    if not os.path.exists(f): continue
    for x in csv.DictReader(open(f)):
        k = (x["kv_format"], x["bs"], x["kv_len"], x["heads"], x["q_len"])
        t[k][n] = (float(x["median_us"]), x["variant"], x["rows_per_cta"], x["splits"])
print("format bs kv heads q | " + " | ".join(names) + " | wgmma v/rows/splits")
for k, v in t.items():
    cells = [f"{v[n][0]:.1f}" if n in v else "-" for n in names]
    p = v.get("wgmma")
    print(" ".join(k), "|", " | ".join(cells), "|", f"{p[1]}/{p[2]}/{p[3]}" if p else "")
P
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/|bs1/kv65536/h16/q1/'
[ "${MLA_LITE:-0}" = 1 ] && F='^$'  # MLA_LITE=1: no checked bench (the suites compare every element)
MLA_DECODE_STAGE1=wgmma timeout 120 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn_bf16_rope --mla_extra --mla_iters=20 \
  "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" > "$L/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"
grep -E '^\|' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -40
f='Fp8LatentHeadsPaging/GpuBf16Rope.*fp8_e4m3fn_h128_paged_plan*:GpuBf16RopePages.*'
rts="64:memcheck 64:racecheck 32:memcheck 16:racecheck 16:synccheck"
[ "${MLA_LITE:-0}" = 1 ] && rts="64:memcheck"
for rt in $rts; do
  rows=${rt%%:*}; tool=${rt##*:}
  log=$L/sanitize-$tool-r$rows.log
  (cd "$B/tests" && MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows timeout 45 \
    compute-sanitizer --tool $tool --error-exitcode 99 ./test_gpu_input_forms \
    "--gtest_filter=$f") > "$log" 2>&1
  echo "$tool rows $rows rc=$? $(grep -m1 'ERROR SUMMARY' "$log") $(grep -E '^\[  (PASSED|FAILED) ' "$log" | tr '\n' ' ') $SECONDS s"
done
echo "total $SECONDS s"
