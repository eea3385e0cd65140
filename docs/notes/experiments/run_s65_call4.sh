#!/usr/bin/env bash
# Sixty-fifth session, call 4 (~1.5 min): call 3's one failure, python_package (its version test:
# the C header still said 0.7.38), again after the header's bump, with its output; and the
# C-API / install tests beside it.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s65_call4
build_release "$L" "$B" || exit 1
(cd "$B" && timeout 150 ctest -R 'python_package|c_api|install' --output-on-failure) > "$L/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "tests passed|Failed|passed,|failed,|skipped" "$L/ctest.log" | tail -8
echo "total $SECONDS s"
