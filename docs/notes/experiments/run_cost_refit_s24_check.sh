#!/usr/bin/env bash
# Twenty-fourth session's out-of-sample check of the re-fitted cost table (on the GPU machine,
# repository root, after run_validate.sh in the same call, whose build it reuses as side B):
# shapes the new table moves that no fit used (cost_refit_s24_check_{fp8,mx}.txt: the first 12 /
# 10 of a seeded random sample of planner_choice_diff's moved shapes), the table before (A: this
# tree with cost_refit_s24_final.patch reversed) against the new one (B).
# (The patch is c24f74b..7b5bf72 of src/; the run took c24f74b..1ed154f, which differs only in
# comments. Build by build_bench.sh, shared with ncu_patch.sh and run_split_costs.sh.)
set -u
E=docs/notes/experiments; OUT=${OUT:-/tmp/out}
V=$(ls -dt /tmp/validate_build.* | head -1)
. $E/build_bench.sh
O=$(build_bench "$OUT" $E/cost_refit_s24_final.patch -R) || exit 1
echo "old table built $SECONDS s"
for f in fp8_e4m3fn:fp8 mxfp4:mx; do
  fmt=${f%%:*}; tag=${f##*:}
  timeout ${MLA_CHECK_TIMEOUT:-110} python3 bench/ab.py --rounds 2 --csv "$OUT/ab_check_$tag.csv" \
    "$O/bench/mla_bench" "$V/bench/mla_bench" -- "--mla_formats=$fmt" --mla_extra --mla_iters=20 \
    --benchmark_filter=. --mla_no_check "--mla_shapes=$(cat $E/cost_refit_s24_check_$tag.txt)" \
    > "$OUT/ab_check_$tag.log" 2>&1
  echo "ab $tag rc=$? $SECONDS s"; tail -16 "$OUT/ab_check_$tag.log"
done
