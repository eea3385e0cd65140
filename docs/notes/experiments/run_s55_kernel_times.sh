#!/usr/bin/env bash
# Fifty-fifth session, one device call (~60-90 s): each kernel's own duration in a call of the
# balanced route and of the uniform plan (ncu, real clocks, --launch-skip past the warm-up;
# ncu serializes the kernels, so a dependent reduce's overlap with stage 1 is not in these),
# plus the bench with the reduce's programmatic dependent launch off. Question: of the balanced
# route's excess over the uniform plan in mla_bench (bs64 kv4096 H128 q1: 190 against 136 us
# on the H100), how much is stage 1 and how much the reduce. Cases in $MLA_KT_CASES.
set -u
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
open_call kernel_times
B=$(build_bench "$L") || exit 1
echo "built $SECONDS s"
for c in ${MLA_KT_CASES:-bs64/kv4096/h128/q1 bs132/kv4096/h128/q1}; do
  for side in uniform balanced; do
    f=$L/$(echo "$c" | tr / _)_$side
    env $( [ $side = balanced ] && echo MLA_DECODE_SCHEDULE=balanced ) \
      timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 6 \
      --kernel-name "regex:stage1|reduce" \
      --launch-count 6 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn "--mla_shapes=$c" \
      --mla_iters=8 --mla_no_check > "$f.ncu.log" 2>&1
    echo "== $c $side"
    grep -E "^  [^ ]|gpu__time_duration" "$f.ncu.log" | grep -v "^==" |
      sed -E 's/^ +void mla::splitkv:://; s/mla::splitkv:://g; s/ +/ /g' | cut -c1-70
    for pdl in 1 0; do
      env $( [ $side = balanced ] && echo MLA_DECODE_SCHEDULE=balanced ) MLA_DECODE_PDL=$pdl \
        timeout 60 "$B/bench/mla_bench" --mla_no_check --mla_formats=fp8_e4m3fn --mla_iters=30 \
        "--mla_shapes=$c" "--mla_csv=$f.pdl$pdl.csv" > "$f.pdl$pdl.log" 2>&1
      echo "bench pdl=$pdl $(python3 -c "import csv,sys; r=next(csv.DictReader(open(sys.argv[1])))
print(r['median_us'])" "$f.pdl$pdl.csv" 2>/dev/null)"
    done
  done
done
echo "total $SECONDS s"
