#!/usr/bin/env bash
# Fifty-first session, one device call (~400 s, carry ["build-peers"]): the issue's "any other
# shape" row (fp8 cache at most 0.85x FlashMLA's bf16 time on the same shape), never measured
# off the benchmark grid before. Builds the library and FlashMLA 9edee0c (build-peers/) in
# parallel, then bench/compare_peers.py (one process, the SPEC method, every output checked
# against an fp32 reference) on shapes off the grid: batch sizes, lengths that are not
# multiples of 1024 (nor of 64), heads 32 and 64, q_len 2 and 3; fp8 e4m3fn cache, bf16 Q.
# Logs: $OUT/offgrid/.
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/offgrid; mkdir -p "$L"
B=$(mktemp -d /tmp/offgrid_build.XXXXXX)
source docs/notes/experiments/start_builds.sh
start_builds "$L" "$B" mla_decode
wait $lib_pid || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "library built $SECONDS s"
wait $fm_pid; echo "flashmla build rc=$? $SECONDS s"
S=$(tr '\n' ';' < docs/notes/experiments/offgrid_shapes.txt | sed 's/;$//')
PYTHONUNBUFFERED=1 PYTHONPATH=python timeout $((${MLA_OFFGRID_END:-590} - SECONDS)) \
  python3 bench/compare_peers.py --lib "$B/src/libmla_decode.so" --flashmla /tmp/flashmla \
  --formats fp8_e4m3fn \
  --shapes "$S" --csv "$L/compare_peers.csv" > "$L/compare_peers.log" 2>&1
echo "compare_peers rc=$? $SECONDS s"
grep -E "FlashMLA|libmla_decode  " "$L/compare_peers.log" | cut -c1-80
tail -12 "$L/compare_peers.log"
