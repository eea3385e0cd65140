#!/usr/bin/env bash
# Fifty-second session, prepared for the next (one device call, ~150 s, no carry): where the
# off-grid shapes that missed "at most 0.85x FlashMLA's bf16" (docs/perf/h100_2026-12-06_s52/
# offgrid_call2) lose their time. The planner splits every element the same way, so a shape of
# few elements and many row groups can leave units idle (bs40 kv3000 H128: 80 CTAs of 47 tiles
# on 132 units at one split; the cost model's split charges, 12 us a wave at 64 rows plus the
# partial O, reject 3 splits of 16 tiles, 240 CTAs in two waves). This times each shape at the
# plan's choice and at forced split counts (MLA_DECODE_NUM_SPLITS; --mla_no_check: timing only,
# the plans' outputs are what the suite checks), floors measured in the same runs.
# Prediction (H100, 64-row tiles ~2.1 us): bs40 kv3000 H128 102.8 us at 1 split -> ~85-90 at 3;
# bs100 kv1500 H32 q3 at 32 rows (r32: three row groups) ~105 against 118.7 at 64.
# Logs: $OUT/offgrid_sweep/.
set -u
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
open_call offgrid_sweep  # L, B, and $OUT/offgrid_sweep.tgz on exit
build_release "$L" "$B" mla_bench || exit 1
MISSES=bs40/kv3000/h128/q1,bs100/kv1500/h32/q3,bs16/kv12000/h128/q1,bs8/kv8192/h64/q2
S=${MLA_SWEEP_SHAPES:-$MISSES,bs50/kv3500/h32/q2,bs32/kv2048/h64/q1}
# Side names: s<splits> (rows the plan's), r<rows> (splits the plan's for those rows, 0.7.32's
# MLA_DECODE_ROWS), r<rows>s<splits>.
# MLA_SWEEP_SIDES replaces the side list (fifty-third session: rows x splits grids).
for side in ${MLA_SWEEP_SIDES:-auto 1 2 3 4 5 6 8 r16 r32 r64 r32s2 r32s3}; do
  side_envs "$side"
  env "${envs[@]}" timeout 60 "$B/bench/mla_bench" \
    --mla_no_check --mla_formats=fp8_e4m3fn --mla_iters=30 "--mla_shapes=$S" \
    "--mla_csv=$L/s$side.csv" > "$L/s$side.log" 2>&1
  echo "side $side rc=$? $SECONDS s"
done
python3 - "$L" <<'PY'
import csv, glob, os, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "s*.csv"))):
    forced = os.path.basename(path)[1:-4]
    for r in csv.DictReader(open(path)):
        key = "bs%s kv%s H%s q%s" % (r["bs"], r["kv_len"], r["heads"], r["q_len"])
        rows.setdefault(key, []).append((forced, r["median_us"], r["splits"], r["floor_read_us"],
                                         r["rows_per_cta"]))
for key, cells in rows.items():
    print(key, " | ".join("%s: %s us (%s splits, %s rows)" % (f, m, s, rc)
                          for f, m, s, fl, rc in cells), "| floor", cells[0][3])
PY
echo "total $SECONDS s"
