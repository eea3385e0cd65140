#!/usr/bin/env bash
# The main job: set up, build the native backend (Release) and run the benchmark.
#
#   bench/run.sh [mla_bench arguments...]
#
# Backend cuda (sm_90a) when nvcc exists, else none; build dir $MLA_BUILD_DIR (default build/).
# mla_bench says itself whether it measured a GPU or, without one, ran the host reference.
# See tests/setup.sh for the environment variables.
set -euo pipefail
# shellcheck source=tests/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tests/setup.sh"

mla_banner "setup"
mla_setup_native bench
mla_banner "build ($MLA_NATIVE_BACKEND, $MLA_BUILD_TYPE) in $MLA_BUILD_DIR"
mla_configure_native
cmake --build "$MLA_BUILD_DIR" --parallel "$MLA_JOBS" --target mla_bench
mla_banner "run: $MLA_BUILD_DIR/bench/mla_bench $*"
exec "$MLA_BUILD_DIR/bench/mla_bench" "$@"
