#!/usr/bin/env bash
# Fifty-third session, one device call (~450 s, carry ["build-peers"]): 0.7.33 (the fp8 32-row
# cost re-fit) on the GPU. Builds the library (all targets) and FlashMLA 9edee0c in parallel;
# the whole GPU suite (tests/ctest_grouped.py: every forced-variant registration, whose plans
# the re-fit moves); then bench/compare_peers.py beside FlashMLA on the fifty-second session's
# 20 off-grid shapes (run_s51_offgrid.sh's list), fp8 e4m3fn cache, bf16 Q, every output
# checked against an fp32 reference; then the default grid's peer comparison while time is
# left. Everything ends by MLA_END seconds (default 560). Logs: $OUT/validate.tgz.
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/validate; mkdir -p "$L"; END=${MLA_END:-560}
trap 'tar -czf "$OUT/validate.tgz" -C "$OUT" validate && rm -rf "$L"' EXIT
B=$(mktemp -d /tmp/validate_build.XXXXXX)
source docs/notes/experiments/start_builds.sh
start_builds "$L" "$B"
wait $lib_pid || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "library built $SECONDS s"
timeout 220 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$L/suite" \
  > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -8
wait $fm_pid; echo "flashmla build rc=$? $SECONDS s"
S='64,1,4096,64;32,1,2048,64;50,2,3500,32;8,2,8192,64;64,1,4096,32;16,3,4096,16'
S="$S;100,3,1500,32;40,1,3000,128;128,1,2000,32;24,1,6000,32;16,1,10000,64;64,3,3000,16"
S="$S;1,1,3000,16;7,1,2500,16;48,1,1500,16;100,1,5000,16;512,1,512,16;1024,1,300,16"
S="$S;2,1,100000,16;16,1,12000,128"
PYTHONUNBUFFERED=1 PYTHONPATH=python timeout $((END - SECONDS)) python3 bench/compare_peers.py \
  --lib "$B/src/libmla_decode.so" --flashmla /tmp/flashmla --formats fp8_e4m3fn --shapes "$S" \
  --csv "$L/offgrid.csv" > "$L/offgrid.log" 2>&1
echo "offgrid compare_peers rc=$? $SECONDS s"; tail -26 "$L/offgrid.log"
PYTHONUNBUFFERED=1 PYTHONPATH=python timeout $((END - SECONDS)) python3 bench/compare_peers.py \
  --lib "$B/src/libmla_decode.so" --flashmla /tmp/flashmla --formats fp8_e4m3fn \
  --csv "$L/grid.csv" > "$L/grid.log" 2>&1
echo "grid compare_peers rc=$? $SECONDS s"; tail -30 "$L/grid.log"
echo "total $SECONDS s"
