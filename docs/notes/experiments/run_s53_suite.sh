#!/usr/bin/env bash
# Fifty-third session, one device call (~150 s; ~300 s with the probe): the whole GPU suite on
# the tree (tests/ctest_grouped.py, every forced-variant registration), then, while MLA_END
# (default 380) seconds are not spent, the fifty-first session's reduce probe
# (run_s51_reduce_probe.sh). Logs: $OUT/suite.tgz, the probe's under $OUT.
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/suite; mkdir -p "$L"; END=${MLA_END:-380}
B=$(mktemp -d /tmp/suite_build.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 300 cmake --build "$B" -j12) > "$L/build.log" 2>&1 ||
  { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "built $SECONDS s"
timeout 220 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$L/suite" \
  > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -8
tar -czf "$OUT/suite.tgz" -C "$OUT" suite && rm -rf "$L"
[ $((END - SECONDS)) -gt 130 ] || { echo "no time for the probe; total $SECONDS s"; exit 0; }
timeout $((END - SECONDS)) bash docs/notes/experiments/run_s51_reduce_probe.sh 2>&1 | tail -30
echo "total $SECONDS s"
