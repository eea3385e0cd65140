#!/usr/bin/env bash
# 0.2.0 beside the tree on the 20 off-grid shapes, fp8 e4m3fn cache, bf16 Q (~3 min; carry
# ["out/v020"], out/v020/src.tar.gz = `git archive --format=tar.gz 72fa160`, 0.2.0's source):
# v020_build and v020_offgrid (build_bench.sh), two rounds, least of each (ab_min.py: B / A =
# tree / 0.2.0; a second round only before MLA_ROUND2_BEFORE s, default 400). s61 ran the same
# on an H100 (run_s61_call1.sh part 2); this form is for the H200 and exits at once on any other
# GPU (MLA_ANY_GPU=1 runs it anyway). Logs in $OUT/v020_offgrid.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call v020_offgrid
grep -q H200 "$L/gpu.txt" || [ "${MLA_ANY_GPU:-0}" = 1 ] ||
  { echo "not an H200 (MLA_ANY_GPU=1 runs it anyway); nothing run"; exit 0; }
v020_build || exit 1
build_release "$L" "$B" mla_bench || exit 1
wait $vpid || { echo "0.2.0 BUILD FAILED"; tail -20 "$L/v020_build.log"; exit 1; }
echo "builds done $SECONDS s"
v020_offgrid "$B" 2 "${MLA_ROUND2_BEFORE:-400}"
echo "total $SECONDS s"
