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
S='64,1,4096,64;32,1,2048,64;50,2,3500,32;8,2,8192,64;64,1,4096,32;16,3,4096,16'
S="$S;100,3,1500,32;40,1,3000,128;128,1,2000,32;24,1,6000,32;16,1,10000,64;64,3,3000,16"
S="$S;1,1,3000,16;7,1,2500,16;48,1,1500,16;100,1,5000,16;512,1,512,16;1024,1,300,16"
S="$S;2,1,100000,16;16,1,12000,128"
PYTHONUNBUFFERED=1 PYTHONPATH=python timeout $((${MLA_OFFGRID_END:-590} - SECONDS)) \
  python3 bench/compare_peers.py --lib "$B/src/libmla_decode.so" --flashmla /tmp/flashmla \
  --formats fp8_e4m3fn \
  --shapes "$S" --csv "$L/compare_peers.csv" > "$L/compare_peers.log" 2>&1
echo "compare_peers rc=$? $SECONDS s"
grep -E "FlashMLA|libmla_decode  " "$L/compare_peers.log" | cut -c1-80
tail -12 "$L/compare_peers.log"
