#!/usr/bin/env bash
# Sixty-seventh session, last call (~2.5 min): run_s67_suite.sh's whole suite ran past its 240 s
# on the H100 and left no result, so this runs the subset the planner change touches: every test
# named *Rope* (plain, wgmma forced, forced 16 / 32 rows; mma16's forced and 64 rows' forced ran
# in call 1) plus test_plan, on the tree. Logs in $OUT/s67_rope_subset.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s67_rope_subset
build_release "$L" "$B" || exit 1
(cd "$B" && timeout 100 ctest -R "Rope|^PlanCreate|^Stage1Select" -E "stage1_mma16|rows64" -j 14 \
  --timeout 90 > "$L/ctest.log" 2>&1)
echo "ctest rc=$? $SECONDS s: $(grep -E 'tests passed|tests failed' "$L/ctest.log")"
grep -E '^\s+[0-9]+ - ' "$L/ctest.log" | head -20
echo "total $SECONDS s"
