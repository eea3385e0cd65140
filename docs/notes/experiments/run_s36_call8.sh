#!/usr/bin/env bash
# Thirty-sixth session, call 8 (~560 s; carry build-peers): 0.7.19 (e4m3 scores at 64 rows with
# K from shared memory in the 128-byte swizzle) validated: run_validate.sh (library build, whole
# GPU suite, checked mla_bench over e4m3fn / fp8 Q / FP8_MMA, FlashMLA beside it), then
# GpuRows64 (the new kernel on contiguous caches and pages of 1-128 tokens, both cache forms)
# under compute-sanitizer memcheck and synccheck on the same build, forced to wgmma.
set -u
OUT=${OUT:-/tmp/out}
timeout 400 bash docs/notes/experiments/run_validate.sh
echo "validate rc=$? $SECONDS s"
B=$(ls -dt /tmp/validate_build.* | head -1)
MLA_SANITIZE_TIMEOUT=85 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows64.*' \
  memcheck synccheck
echo "total $SECONDS s"
