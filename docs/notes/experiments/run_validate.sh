#!/usr/bin/env bash
# One device call that validates the tree: builds the library (all targets) and, in parallel,
# FlashMLA from build-peers/ (copy ../shared/anchors/peers/{build_flashmla.sh,flashmla-*.tar.xz}
# there and name build-peers in the call's carry); then the whole GPU suite (tests/ctest_grouped.py,
# every forced-variant registration), a checked mla_bench (every element against the host
# reference) over the formats in $MLA_FORMATS (none when it is set empty), and
# bench/compare_peers.py beside FlashMLA on fp8_e4m3fn: with MLA_VALIDATE_OFFGRID=1 first on
# the 20 off-grid shapes of offgrid_shapes.txt (the fifty-second session's), then on the
# default grid (MLA_VALIDATE_SUITE=0: no suite, for a card whose suite already ran on the same
# tree). Everything ends by MLA_END seconds (default 560): run under `timeout ~590`;
# logs in $OUT/validate.tgz.
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/validate; mkdir -p "$L"; END=${MLA_END:-560}
FORMATS=${MLA_FORMATS-fp8_e4m3fn,fp8_e4m3fn_qfp8,fp8_e4m3fn_qfp8_mma}
F=${MLA_BENCH_FILTER:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs1/kv65536/h16/q1/'}
trap 'tar -czf "$OUT/validate.tgz" -C "$OUT" validate && rm -rf "$L"' EXIT
B=$(mktemp -d /tmp/validate_build.XXXXXX)
source docs/notes/experiments/start_builds.sh
start_builds "$L" "$B"
wait $lib_pid || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "library built $SECONDS s"
if [ "${MLA_VALIDATE_SUITE:-1}" = 1 ]; then
  timeout 220 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$L/suite" \
    > "$L/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -8
else
  echo "suite skipped (MLA_VALIDATE_SUITE=0)"
fi
if [ -n "$FORMATS" ]; then
  timeout 200 "$B/bench/mla_bench" "--mla_formats=$FORMATS" --mla_extra --mla_iters=20 \
    "--benchmark_filter=$F" "--mla_csv=$L/mla_bench.csv" > "$L/mla_bench.log" 2>&1
  echo "mla_bench rc=$? $SECONDS s"
  grep -E '^\|' "$L/mla_bench.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -60
fi
[ -n "$fm_pid" ] || { echo "no build-peers/: FlashMLA not timed; total $SECONDS s"; exit 0; }
wait $fm_pid; echo "flashmla build rc=$? $SECONDS s"
peers() {  # NAME [compare_peers.py arguments]
  local name=$1 left=$((END - SECONDS)); shift
  [ $left -gt 10 ] || { echo "$name: no time left (MLA_END $END)"; return; }
  PYTHONUNBUFFERED=1 PYTHONPATH=python timeout $left python3 bench/compare_peers.py \
    --lib "$B/src/libmla_decode.so" --flashmla /tmp/flashmla --formats fp8_e4m3fn "$@" \
    --csv "$L/$name.csv" > "$L/$name.log" 2>&1
  echo "$name compare_peers rc=$? $SECONDS s"; tail -30 "$L/$name.log"
}
if [ "${MLA_VALIDATE_OFFGRID:-0}" = 1 ]; then
  peers offgrid --shapes "$(tr '\n' ';' < docs/notes/experiments/offgrid_shapes.txt | sed 's/;$//')"
fi
peers compare_peers
echo "total $SECONDS s"
