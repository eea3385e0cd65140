#!/usr/bin/env bash
# Fifty-third session, one device call (~120 s, no carry): the out-of-sample check of the fp8
# wgmma cost table re-fit (32 rows: 1.75 -> 1.55 us a tile, split charge 3 -> 4 us a wave;
# docs/notes/experiments/cost_table_fit_s53.py). 30 of the 276 grid shapes the re-fit moves
# (planner_choice_diff wgmma32=1.55,2.0,2,4; none of them in the fit's sweeps): all 14 that do
# not leave 64 rows, 16 of the 232 (of 262) leaving 64 rows with caches under 3 GB. Each is timed
# at its old plan then its new one (MLA_DECODE_ROWS + MLA_DECODE_NUM_SPLITS, one build,
# --mla_no_check: timing only), fp8 e4m3fn cache, bf16 Q. Logs: $OUT/moved_ab.tgz.
set -u
. docs/notes/experiments/start_builds.sh
open_call moved_ab  # L, B, and $OUT/moved_ab.tgz on exit
build_release "$L" "$B" mla_bench || exit 1
# tag:old rows:old splits:new rows:new splits
CASES="bs6/kv4096/h16/q3:16:7:32:11 bs8/kv3000/h16/q3:16:5:32:8 bs8/kv32768/h32/q3:32:11:32:5
bs12/kv2048/h8/q3:32:11:16:5 bs24/kv32768/h32/q1:32:11:32:5
bs24/kv32768/h16/q2:32:11:32:5 bs24/kv3000/h32/q3:32:3:32:1 bs24/kv8192/h32/q3:32:5:32:3
bs24/kv32768/h8/q4:32:11:32:5 bs48/kv4096/h8/q3:32:5:32:2 bs48/kv16384/h8/q3:32:8:32:5
bs192/kv3000/h32/q1:32:2:32:1 bs192/kv3000/h16/q2:32:2:32:1 bs192/kv3000/h8/q4:32:2:32:1
bs1/kv65536/h128/q1:64:64:32:32 bs2/kv8192/h128/q3:64:11:32:5
bs3/kv3000/h128/q4:64:5:32:2 bs4/kv32768/h16/q4:64:32:32:16 bs8/kv16384/h64/q1:64:16:32:8
bs12/kv3000/h64/q2:64:5:32:2 bs16/kv4096/h32/q3:64:4:32:2 bs24/kv4096/h64/q2:64:2:32:1
bs24/kv3000/h128/q4:64:1:32:1 bs32/kv32768/h32/q3:64:2:32:4 bs48/kv2048/h64/q3:64:1:32:1
bs64/kv1000/h64/q3:64:1:32:1 bs96/kv4096/h128/q1:64:2:32:1 bs96/kv1000/h32/q4:64:1:32:1
bs192/kv2048/h64/q1:64:1:32:1 bs192/kv1000/h16/q4:64:1:32:1"
for c in $CASES; do
  IFS=: read -r tag orow osp nrow nsp <<< "$c"
  for side in old new; do
    if [ $side = old ]; then r=$orow s=$osp; else r=$nrow s=$nsp; fi
    f=$L/${tag//\//_}_$side
    MLA_DECODE_ROWS=$r MLA_DECODE_NUM_SPLITS=$s timeout 60 "$B/bench/mla_bench" --mla_no_check \
      --mla_formats=fp8_e4m3fn --mla_iters=30 "--mla_shapes=$tag" "--mla_csv=$f.csv" \
      > "$f.log" 2>&1
    us=$(python3 -c "import csv,sys; r=next(csv.DictReader(open(sys.argv[1])))
print(r['median_us'], r['rows_per_cta'], r['splits'])" "$f.csv" 2>/dev/null)
    echo "$tag $side $us"
  done
done
echo "total $SECONDS s"
