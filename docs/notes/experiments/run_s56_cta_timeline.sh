#!/usr/bin/env bash
# Fifty-sixth session: where a short stage-1 CTA's time goes (exp_s56_cta_timeline.patch: every
# CTA's events of call 10, stage 1 and the reduce; cta_timeline_parse.py). One build of the
# bench with the patch, then one run per case (~90 s, no carry).
#   bash docs/notes/experiments/run_s56_cta_timeline.sh [FORMAT:SHAPE ...]
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s56_cta_timeline
TB=$(build_bench "$L" "${MLA_TL_PATCH:-docs/notes/experiments/exp_s56_cta_timeline.patch}") || exit 1
echo "built $SECONDS s"
cases=("$@"); [ ${#cases[@]} -gt 0 ] || cases=(fp8_e4m3fn:bs4/kv1024/h16/q1
  fp8_e4m3fn:bs32/kv1024/h16/q1 fp8_e4m3fn:bs4/kv8192/h16/q1 fp8_e4m3fn:bs64/kv1024/h16/q1
  fp8_e4m3fn:bs256/kv1024/h16/q1 mxfp4:bs32/kv1024/h16/q1 bf16:bs4/kv1024/h16/q1)
for c in "${cases[@]}"; do
  f=${c%%:*}; s=${c#*:}; n=$L/${f}_$(echo "$s" | tr / _)
  timeout 60 "$TB/bench/mla_bench" --mla_no_check --mla_iters=30 "--mla_formats=$f" \
    "--mla_shapes=$s" "--mla_csv=$n.csv" > "$n.log" 2>&1 || echo "$c rc=$?"
  echo "== $c: bench median $(python3 -c "import csv,sys
print(next(csv.DictReader(open(sys.argv[1])))['median_us'])" "$n.csv" 2>/dev/null) us"
  python3 docs/notes/experiments/cta_timeline_parse.py "$n.log"
done
echo "total $SECONDS s"
