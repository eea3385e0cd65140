#!/usr/bin/env bash
# One device call for a change that the environment switches on (no patch): builds the tree
# once, runs $MLA_SMOKE (a GoogleTest filter of test_gpu_paths) with the environment of side B,
# then bench/ab.py of side A (the plain build) against side B ($MLA_ENV_B in front of the same
# binary; more sides: $MLA_ENV_C, $MLA_ENV_D), then the whole GPU suite with side B's
# environment where time is left. Run under a `timeout` of ~570 s:
#   MLA_ENV_B='MLA_DECODE_FP8_SCORE=1' MLA_AB_FORMATS=fp8_e4m3fn_qfp8 \
#     bash docs/notes/experiments/run_env_ab.sh
# $MLA_SMOKE_ENV: the smoke run's environment instead of side B's.
# $MLA_SMOKE_CONTINUE: go on after a failed smoke run (accuracy measurements).
# $MLA_AB_FORMATS, $MLA_AB_FILTER, $MLA_AB_TIMEOUT, $MLA_AB_ARGS, $MLA_NO_SUITE as in
# run_patch.sh. Everything lands in $OUT/run_env_ab.tgz.
set -u
: "${MLA_ENV_B:?set MLA_ENV_B to the environment of side B, e.g. MLA_DECODE_FP8_SCORE=1}"
FORMATS=${MLA_AB_FORMATS:-fp8_e4m3fn}
F=${MLA_AB_FILTER:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs128/kv4096/h16/q[24]/|bs64/kv4096/h128/q[12]/|bs1/kv65536/h16/q1/'}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); cd "$ROOT" || exit 1
trap 'tar -czf "$OUT/run_env_ab.tgz" -C "$W" .' EXIT
B=$(mktemp -d /tmp/run_env_ab_build.XXXXXX)
(cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 300 cmake --build "$B" -j16) > "$W/build.log" 2>&1 \
  || { echo "BUILD FAILED"; tail -30 "$W/build.log"; exit 1; }
echo "build $SECONDS s"
if [ -n "${MLA_SMOKE:-}" ]; then
  (cd "$B/tests" && env ${MLA_SMOKE_ENV:-$MLA_ENV_B} timeout "${MLA_SMOKE_TIMEOUT:-120}" \
    ./test_gpu_paths "--gtest_filter=$MLA_SMOKE") > "$W/smoke.log" 2>&1
  rc=$?; echo "smoke rc=$rc $SECONDS s"; grep -E "^\[  (PASSED|FAILED) |tests ran|fp8 rule" "$W/smoke.log"
  if [ $rc -ne 0 ]; then
    grep -m 20 -E "Failure|error|Expected|Which is" "$W/smoke.log"
    [ -n "${MLA_SMOKE_CONTINUE:-}" ] || exit 1
  fi
fi
sides=("$B/bench/mla_bench" "$MLA_ENV_B $B/bench/mla_bench")
[ -n "${MLA_ENV_C:-}" ] && sides+=("$MLA_ENV_C $B/bench/mla_bench")
[ -n "${MLA_ENV_D:-}" ] && sides+=("$MLA_ENV_D $B/bench/mla_bench")
timeout "${MLA_AB_TIMEOUT:-300}" python3 bench/ab.py --rounds 2 --csv "$W/ab.csv" "${sides[@]}" -- \
  "--mla_formats=$FORMATS" --mla_extra --mla_iters=20 "--benchmark_filter=$F" ${MLA_AB_ARGS:-} \
  > "$W/ab.log" 2>&1
echo "ab rc=$? $SECONDS s"; tail -22 "$W/ab.log"
left=$((560 - SECONDS))
if [ -n "${MLA_NO_SUITE:-}" ]; then
  echo "suite skipped (MLA_NO_SUITE)"
elif [ $left -gt 60 ]; then
  env $MLA_ENV_B timeout $left python3 "$ROOT/tests/ctest_grouped.py" --build "$B" -j 12 \
    -E install_ --log-dir "$W/suite" > "$W/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$W/suite.log" | head -20
fi
echo "total $SECONDS s"
