#!/usr/bin/env bash
# One device call that validates the tree: builds the library (all targets) and, in parallel,
# FlashMLA from build-peers/ (copy ../shared/anchors/peers/{build_flashmla.sh,flashmla-*.tar.xz}
# there and name build-peers in the call's carry); then the whole GPU suite (tests/ctest_grouped.py,
# every forced-variant registration), a checked mla_bench (every element against the host
# reference) over the formats in $MLA_FORMATS, and bench/compare_peers.py beside FlashMLA on
# fp8_e4m3fn. Run under `timeout ~580`; logs in $OUT/validate.tgz.
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/validate; mkdir -p "$L"
FORMATS=${MLA_FORMATS:-fp8_e4m3fn,fp8_e4m3fn_qfp8,fp8_e4m3fn_qfp8_mma}
F=${MLA_BENCH_FILTER:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs1/kv65536/h16/q1/'}
trap 'tar -czf "$OUT/validate.tgz" -C "$OUT" validate && rm -rf "$L"' EXIT
B=$(mktemp -d /tmp/validate_build.XXXXXX)
source docs/notes/experiments/start_builds.sh
start_builds "$L" "$B"
wait $lib_pid || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "library built $SECONDS s"
timeout 200 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$L/suite" \
  > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -8
timeout 200 "$B/bench/mla_bench" "--mla_formats=$FORMATS" --mla_extra --mla_iters=20 \
  "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" > "$L/mla_bench.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"; grep -E '^\|' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -60
if [ -n "$fm_pid" ]; then
  wait $fm_pid; echo "flashmla build rc=$? $SECONDS s"
  PYTHONPATH=python timeout 150 python3 bench/compare_peers.py --lib "$B/src/libmla_decode.so" \
    --flashmla /tmp/flashmla --formats fp8_e4m3fn --csv "$L/compare_peers.csv" \
    > "$L/compare_peers.log" 2>&1
  echo "compare_peers rc=$? $SECONDS s"; tail -30 "$L/compare_peers.log"
fi
echo "total $SECONDS s"
