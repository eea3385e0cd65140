# Sourced by the device-call scripts that time FlashMLA beside the library (run_validate.sh,
# run_s51_offgrid.sh, run_s53_validate.sh), and for build_release (below). start_builds LOG_DIR BUILD_DIR [TARGET] starts, in
# the background, the library's Release build for sm_90a (every target, or TARGET) in BUILD_DIR
# and FlashMLA's from build-peers/ (build_flashmla.sh and the source tarball, carried) into
# /tmp/flashmla; logs build.log and flashmla_build.log in LOG_DIR. Sets lib_pid, and fm_pid
# (empty where build-peers/ is absent).
start_builds() {
  local log=$1 build=$2 target=${3:-}
  (cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DMLA_BACKEND=cuda && timeout 300 cmake --build "$build" -j12 ${target:+--target "$target"}) \
    > "$log/build.log" 2>&1 &
  lib_pid=$!
  fm_pid=""
  if [ -f build-peers/build_flashmla.sh ]; then
    (MAX_JOBS=8 timeout 330 bash build-peers/build_flashmla.sh build-peers/flashmla-*.tar.xz \
      /tmp/flashmla) > "$log/flashmla_build.log" 2>&1 &
    fm_pid=$!
  fi
}

# build_release LOG_DIR BUILD_DIR [TARGET]: the library's Release build for sm_90a (every
# target, or TARGET) in BUILD_DIR, in the foreground, log LOG_DIR/build.log; on failure prints
# its tail and returns 1 (run_s54_balanced.sh, run_s54_suite_subset.sh, run_s53_moved_ab.sh,
# run_s52_offgrid_sweep.sh).
build_release() {
  local log=$1 build=$2 target=${3:-}
  (cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DMLA_BACKEND=cuda && timeout 280 cmake --build "$build" -j14 ${target:+--target "$target"}) \
    > "$log/build.log" 2>&1 || { echo "BUILD FAILED"; tail -30 "$log/build.log"; return 1; }
  echo "built $SECONDS s"
}

# open_call NAME: a device call's log folder L=$OUT/NAME (OUT defaults to /tmp/out), packed into
# $OUT/NAME.tgz however the call ends (a call cut at its limit leaves more files under $OUT than
# come back), and an empty build folder B.
open_call() {
  OUT=${OUT:-/tmp/out}; L=$OUT/$1; mkdir -p "$L"
  # shellcheck disable=SC2064  # expanded now, on purpose
  trap "tar -czf '$OUT/$1.tgz' -C '$OUT' '$1' && rm -rf '$L'" EXIT
  B=$(mktemp -d "/tmp/$1.XXXXXX")
}

# device_call NAME: open_call NAME, then the GPU's name and clock into $L/gpu.txt (and shown).
device_call() {
  open_call "$1"
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
}

# run_suite LOG_DIR BUILD_DIR [TIMEOUT]: the whole GPU suite of BUILD_DIR (tests/ctest_grouped.py,
# every forced-variant registration, -E install_) under `timeout` TIMEOUT s (400 unless given: on
# an H100 the 0.7.41 suite needed more than 240 and, killed, left no report, since the driver
# writes it at the end); log LOG_DIR/suite.log, per-group logs in LOG_DIR/suite; prints its exit
# status and summary (run_s65_call3.sh, run_s67_suite.sh).
run_suite() {
  local log=$1 build=$2 limit=${3:-400}
  timeout "$limit" python3 tests/ctest_grouped.py --build "$build" -j 12 -E install_ \
    --log-dir "$log/suite" > "$log/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$log/suite.log" | tail -8
}
