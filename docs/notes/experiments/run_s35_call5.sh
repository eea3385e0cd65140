#!/usr/bin/env bash
# Thirty-fifth session, call 5 (~350 s): GpuRows16And32 (0.7.18's new copy paths) on the final
# tree's own build under compute-sanitizer memcheck and synccheck, forced to wgmma.
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
B=$(build_tree test_gpu_paths 200) || exit 1
echo "built $SECONDS s"
MLA_SANITIZE_TIMEOUT=200 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows16And32.*' \
  memcheck synccheck
echo "total $SECONDS s"
