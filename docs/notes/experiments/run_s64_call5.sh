#!/usr/bin/env bash
# Sixty-fourth session, call 5 (~3-4 min, no carry): compute-sanitizer memcheck and racecheck
# over 0.7.38's changed copies (mma16 forced, MXFP4 and MXFP4 keys with fp8 V: uneven lengths,
# shuffled pages with sentinel tails, tile and split boundaries; not the large pages case).
# Logs in $OUT.
set -u
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. docs/notes/experiments/build_bench.sh
B=$(build_tree test_gpu_paths 200) || exit 1
echo "built $SECONDS s"
filter='AllFormats/GpuFormatHeads.UnevenLengths/mxfp4*:AllFormats/GpuPathsFormat.*/mxfp4*:-*LargeShuffledPages*'
MLA_DECODE_STAGE1=mma16 MLA_SANITIZE_TIMEOUT=${MLA_SANITIZE_TIMEOUT:-100} \
  bash docs/notes/experiments/run_sanitize.sh "$B" "$filter" memcheck racecheck
echo "total $SECONDS s"
