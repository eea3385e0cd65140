#!/usr/bin/env bash
# Fifty-fourth session, the last device call (~220 s): the GPU suites' registrations the earlier
# calls did not run after this session's refactors of shared code (work.h's stage1_rows and
# partial_head0 are mma16's too; the reduce's launch was refactored; init_barriers): every
# .stage1_mma16, .nopdl, .one_split and .notma registration, GpuGraph / GpuPlans / GpuPlanApi / GpuBadInput /
# GpuLong, and test_gpu_balanced once more. Logs: $OUT/suite_subset.tgz.
set -u
. docs/notes/experiments/start_builds.sh
open_call suite_subset  # L, B, and $OUT/suite_subset.tgz on exit
build_release "$L" "$B" || exit 1
R='(\.stage1_mma16|\.nopdl|\.one_split|\.notma)$'
R="$R|^(GpuGraph|Steps/GpuGraph|GpuPlans|GpuPlanApi|GpuBadInput|GpuLong|GpuBalanced)\\."
timeout ${MLA_SUITE_TIMEOUT:-180} python3 tests/ctest_grouped.py --build "$B" -j 12 -R "$R" \
  -E install_ --log-dir "$L/suite" > "$L/suite.log" 2>&1
echo "suite subset rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -8
echo "total $SECONDS s"
