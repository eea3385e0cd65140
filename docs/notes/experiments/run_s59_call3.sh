#!/usr/bin/env bash
# Fifty-ninth session, call 3 (~300 s, no carry): on one Release build of the tree,
#   1. MXFP4 at 64 rows (MLA_DECODE_ROWS=64: the consumers decode to bf16, WgmmaMxfp4Decode)
#      against the planner's 32-row staged kernel, checked, two rounds, on the shapes where
#      MXFP4 is ~2x fp8 (H128 q1 / q2, H16 q4);
#   2. the off-grid shapes that miss 0.85x FlashMLA on the H200 only (32 rows), and bs8 kv8192
#      H64 q2, at the plan's choice and forced rows / splits (timing only, as
#      run_s52_offgrid_sweep.sh), to see whether the planner fitted on H100s still picks the
#      fastest plan on the H200;
#   3. compute-sanitizer memcheck over GpuRows64.* and GpuFp8Mma.* (0.7.37's row-lane Q
#      prologue had not run under a sanitizer), in the time left.
#   bash docs/notes/experiments/run_s59_call3.sh
# MLA_ROUNDS (2), MLA_SIDES (the sweep's sides), MLA_END (330: the sanitizer runs until then),
# MLA_TARGET=mla_bench (build only the bench; no sanitizer then).
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s59_call3
build_release "$L" "$B" ${MLA_TARGET:-} || exit 1
bench() {  # NAME ENV... -- ARGS...
  local n=$1; shift; local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 60 "$B/bench/mla_bench" --mla_iters=20 "$@" "--mla_csv=$L/$n.csv" \
    > "$L/$n.log" 2>&1 || echo "$n rc=$?"
}
S=bs64/kv4096/h128/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
for round in $(seq 1 ${MLA_ROUNDS:-2}); do
  bench mxfp4_plan_$round -- --mla_formats=mxfp4 "--mla_shapes=$S"
  bench mxfp4_r64_$round MLA_DECODE_ROWS=64 -- --mla_formats=mxfp4 "--mla_shapes=$S"
  echo "== mxfp4 round $round $SECONDS s"
done
O=bs50/kv3500/h32/q2,bs32/kv2048/h64/q1,bs16/kv10000/h64/q1,bs8/kv8192/h64/q2
for side in ${MLA_SIDES:-auto r16 r64 r32s1 r32s2 r32s4 r64s1 r64s2 r64s4}; do
  side_envs "$side"
  bench off_$side "${envs[@]}" -- --mla_no_check --mla_formats=fp8_e4m3fn "--mla_shapes=$O"
done
echo "== sweep $SECONDS s"
python3 - "$L" <<'PY'
import csv, glob, os, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    name = os.path.basename(path)[:-4]
    for r in csv.DictReader(open(path)):
        key = "%s bs%s kv%s H%s q%s" % (r["kv_format"], r["bs"], r["kv_len"], r["heads"],
                                        r["q_len"])
        rows.setdefault(key, []).append("%s %s (%s r, %s s, %s)" % (
            name, r["median_us"], r["rows_per_cta"], r["splits"], r["ok"]))
for key, cells in rows.items():
    print(key, " | ".join(cells))
PY
left=$((${MLA_END:-330} - SECONDS))
if [ $left -gt 40 ]; then
  OUT=$L MLA_SANITIZE_TIMEOUT=$left bash docs/notes/experiments/run_sanitize.sh "$B" \
    'GpuRows64.*:GpuFp8Mma.*' memcheck
fi
echo "total $SECONDS s"
