#!/usr/bin/env bash
# Thirty-fifth session, call 5 (~350 s): GpuRows16And32 (0.7.18's new copy paths) on the final
# tree's own build under compute-sanitizer memcheck and synccheck, forced to wgmma.
set -u
OUT=${OUT:-/tmp/out}
B=$(mktemp -d /tmp/rows32_build.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 200 cmake --build "$B" -j16 --target test_gpu_paths) \
  > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; exit 1; }
echo "built $SECONDS s"
MLA_SANITIZE_TIMEOUT=200 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows16And32.*' \
  memcheck synccheck
echo "total $SECONDS s"
