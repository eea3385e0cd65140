# shellcheck shell=bash
# Shared setup of tests/run.sh and bench/run.sh. Source it; it only defines functions/variables.
#
# Environment:
#   MLA_BUILD_DIR        native build directory (default build/)
#   MLA_HIP_BUILD_DIR    AMD compile-check build directory (default build-hip/)
#   MLA_EMU_BUILD_DIR    build directory of the AMD path on the emulated device (default build-emu/)
#   MLA_EMU_SM90_BUILD_DIR  the same for the NVIDIA path (default build-emu-sm90/)
#   MLA_TSAN_BUILD_DIR   ThreadSanitizer build directory of tests/run.sh (default build-tsan/)
#   MLA_BUILD_TYPE       CMake build type of the native build (default Release)
#   MLA_NATIVE_BACKEND   backend of the native build (default: cuda when nvcc exists, else none)
#   MLA_CUDA_ARCH        CUDA architectures of the native build (default 90a)
#   MLA_NO_INSTALL=1     never call apt-get
#   MLA_JOBS             parallel jobs (default: nproc)
#   MLA_CMAKE_ARGS       extra arguments for every CMake configure (word-split)
#   MLA_HIP_NEW_CXX      clang++ of the AMD device check of MLA_HIP_NEW_ARCHS (default
#                        clang++-22 for gfx950, the architectures clang-19 does not know)

MLA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MLA_BUILD_DIR="${MLA_BUILD_DIR:-$MLA_ROOT/build}"
MLA_HIP_BUILD_DIR="${MLA_HIP_BUILD_DIR:-$MLA_ROOT/build-hip}"
MLA_EMU_BUILD_DIR="${MLA_EMU_BUILD_DIR:-$MLA_ROOT/build-emu}"
MLA_EMU_SM90_BUILD_DIR="${MLA_EMU_SM90_BUILD_DIR:-$MLA_ROOT/build-emu-sm90}"
MLA_TSAN_BUILD_DIR="${MLA_TSAN_BUILD_DIR:-$MLA_ROOT/build-tsan}"
MLA_BUILD_TYPE="${MLA_BUILD_TYPE:-Release}"
MLA_JOBS="${MLA_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# Debian packages of the AMD compile check (clang-19's amdgcn link step needs lld-19).
# clang-tools-19 holds clang-offload-bundler, which `clang -x hip` runs to pack device code.
MLA_HIP_PACKAGES=(clang-19 clang-tools-19 lld-19 libamdhip64-dev rocm-device-libs)
MLA_HIP_CXX="${MLA_HIP_CXX:-clang++-19}"
MLA_HIP_CC="${MLA_HIP_CC:-clang-19}"
# The device check of the architectures clang-19 does not know: gfx950 (MI355) by clang-22, from
# Debian 12's security suite. Assembly needs the compiler alone; lld-22 makes it the complete
# amdgcn toolchain a linked gfx950 build would use.
MLA_HIP_NEW_PACKAGES=(clang-22 lld-22)
MLA_HIP_NEW_CXX="${MLA_HIP_NEW_CXX:-clang++-22}"
MLA_HIP_NEW_ARCHS="${MLA_HIP_NEW_ARCHS:-gfx950}"

mla_log() { printf '[mla] %s\n' "$*"; }
mla_banner() { printf '\n[mla] ==== %s ====\n' "$*"; }

# Run as root: directly, or through passwordless sudo. Fails when neither is possible.
mla_as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

_mla_apt_updated=0   # 1: updated in this run; 2: update failed (no registry), do not retry
# apt-get install "$@" when apt-get exists and we may use it; 1 (with a message) otherwise.
# Never fatal by itself: a machine without a package registry (the GPU machine) ends here.
mla_apt_install() {
  [ "$#" -gt 0 ] || return 0
  if [ "${MLA_NO_INSTALL:-0}" = 1 ]; then
    mla_log "MLA_NO_INSTALL=1: not installing $*"
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    mla_log "no apt-get: cannot install $*"
    return 1
  fi
  if ! mla_as_root true; then
    mla_log "neither root nor passwordless sudo: cannot install $*"
    return 1
  fi
  if [ "$_mla_apt_updated" = 2 ]; then
    mla_log "no package registry (apt-get update failed before): cannot install $*"
    return 1
  fi
  local opts=(-o Acquire::Retries=1 -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20)
  if [ "$_mla_apt_updated" = 0 ]; then
    mla_log "apt-get update"
    if ! mla_as_root env DEBIAN_FRONTEND=noninteractive timeout 600 \
        apt-get "${opts[@]}" -q update; then
      mla_log "apt-get update failed (no package registry here?)"
      _mla_apt_updated=2
      return 1
    fi
    _mla_apt_updated=1
  fi
  mla_log "apt-get install $*"
  if ! mla_as_root env DEBIAN_FRONTEND=noninteractive timeout 1800 \
      apt-get "${opts[@]}" -q -y --no-install-recommends install "$@"; then
    mla_log "apt-get install $* failed"
    return 1
  fi
}

# True when a CMake package config <file> exists under a usual prefix (/usr, /usr/local, /opt/*).
mla_have_cmake_config() {
  local name="$1" file="$2" base sub
  for base in /usr /usr/local /opt/*; do
    for sub in lib lib64 "lib/$(uname -m)-linux-gnu" share; do
      [ -f "$base/$sub/cmake/$name/$file" ] && return 0
    done
  done
  return 1
}

# nvcc on the PATH, or the toolkit's default place.
mla_find_nvcc() {
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  command -v nvcc >/dev/null 2>&1
}

# What the native build needs: cmake, a C/C++ compiler, GoogleTest, Google Benchmark (ninja
# when we can get it). Installs what is missing where apt-get can; otherwise leaves it to CMake.
mla_setup_native() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  { command -v c++ >/dev/null 2>&1 && command -v cc >/dev/null 2>&1; } || missing+=(g++ gcc)
  command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
  # GoogleTest for the bench too: bench/run.sh builds into the same tree as the tests.
  mla_have_cmake_config GTest GTestConfig.cmake || missing+=(libgtest-dev)
  mla_have_cmake_config benchmark benchmarkConfig.cmake || missing+=(libbenchmark-dev)
  # The python/ package's tests (ctest python_package; pip for its offline install test).
  { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy, pytest, pip' 2>/dev/null; } \
    || missing+=(python3 python3-numpy python3-pytest python3-pip)
  if [ "${#missing[@]}" -gt 0 ]; then
    mla_log "native build: missing ${missing[*]}"
    mla_apt_install "${missing[@]}" || mla_log "continuing without them; CMake will say what is absent"
  fi
  if ! command -v cmake >/dev/null 2>&1; then
    mla_log "error: cmake is required"
    return 1
  fi
  MLA_NATIVE_BACKEND="${MLA_NATIVE_BACKEND:-}"
  if [ -z "$MLA_NATIVE_BACKEND" ]; then
    if mla_find_nvcc; then MLA_NATIVE_BACKEND=cuda; else MLA_NATIVE_BACKEND=none; fi
  elif [ "$MLA_NATIVE_BACKEND" = cuda ]; then
    mla_find_nvcc || { mla_log "error: MLA_NATIVE_BACKEND=cuda but no nvcc"; return 1; }
  fi
  mla_log "native backend: $MLA_NATIVE_BACKEND"
}

# A ThreadSanitizer program builds and runs here (the compiler has the runtime, and the kernel's
# address-space layout suits it). 0: yes.
mla_tsan_runs() {
  local dir ok=1
  dir="$(mktemp -d)" || return 1
  printf 'int main(void) { return 0; }\n' > "$dir/probe.c"
  if cc -fsanitize=thread "$dir/probe.c" -o "$dir/probe" >/dev/null 2>&1 \
      && "$dir/probe" >/dev/null 2>&1; then
    ok=0
  fi
  rm -rf "$dir"
  return "$ok"
}

# The Debian clang-19 + HIP toolchain of the AMD compile check is complete.
mla_hip_toolchain_ok() {
  command -v "$MLA_HIP_CXX" >/dev/null 2>&1 || return 1
  command -v "$MLA_HIP_CC" >/dev/null 2>&1 || return 1
  [ -x /usr/lib/llvm-19/bin/ld.lld ] || command -v ld.lld-19 >/dev/null 2>&1 || return 1
  [ -x /usr/lib/llvm-19/bin/clang-offload-bundler ] || return 1
  [ -f /usr/include/hip/hip_runtime.h ] || return 1
  compgen -G "/usr/lib/*/libamdhip64.so" >/dev/null || return 1
  compgen -G "/usr/lib/*/amdgcn/bitcode/ocml.bc" >/dev/null || return 1
}

# Make the AMD toolchain present if we can. 0: ready; 1: not available here.
mla_setup_hip() {
  if mla_hip_toolchain_ok; then return 0; fi
  mla_log "AMD compile check: toolchain incomplete, trying to install ${MLA_HIP_PACKAGES[*]}"
  mla_apt_install "${MLA_HIP_PACKAGES[@]}" || true
  mla_hip_toolchain_ok
}

# The newer clang of the MLA_HIP_NEW_ARCHS device check, installed if we can. 0: ready.
mla_setup_hip_new() {
  command -v "$MLA_HIP_NEW_CXX" >/dev/null 2>&1 && return 0
  mla_log "AMD device check of $MLA_HIP_NEW_ARCHS: no $MLA_HIP_NEW_CXX, trying to install" \
          "${MLA_HIP_NEW_PACKAGES[*]}"
  mla_apt_install "${MLA_HIP_NEW_PACKAGES[@]}" || true
  command -v "$MLA_HIP_NEW_CXX" >/dev/null 2>&1
}

# mla_ctest <label> <build dir> [ctest arguments...]: ctest of one build (failures in full),
# then one line of counts appended to MLA_TEST_COUNTS for the summary. The counts come from
# ctest's report: its "F tests failed out of T" line (T leaves disabled tests out) and its list
# of tests that did not run. ctest counts a skipped test as passed; these counts do not.
# Returns ctest's status.
MLA_TEST_COUNTS=()
mla_ctest() {
  local label="$1" dir="$2"; shift 2
  local log="$dir/Testing/mla_ctest_stdout.txt" rc=0
  mkdir -p "$dir/Testing"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$MLA_JOBS" "$@" | tee "$log" \
    || rc=$?
  local line total failed skipped ran counts
  line="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" || true)"
  line="${line##*$'\n'}"  # the last such line
  if [ -z "$line" ]; then
    MLA_TEST_COUNTS+=("$label: no counts (ctest exited with $rc before its report; see above)")
    return "$rc"
  fi
  total="${line##* }"
  failed="$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")"
  skipped="$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Skipped\)$' "$log" || true)"
  ran=$((total - skipped))
  counts="$total tests, $ran ran ($((ran - failed)) passed, $failed failed), $skipped skipped"
  MLA_TEST_COUNTS+=("$label: $counts")
  return "$rc"
}

# mla_configure <build dir> <cmake args...>: Ninja for a new build dir when there is one.
mla_configure() {
  local dir="$1"; shift
  local gen=()
  if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    gen=(-G Ninja)
  fi
  # shellcheck disable=SC2086
  cmake -S "$MLA_ROOT" -B "$dir" "${gen[@]}" "$@" ${MLA_CMAKE_ARGS:-}
}

# Configure the native build (build/): backend from mla_setup_native, $MLA_BUILD_TYPE.
mla_configure_native() {
  local args=(-DCMAKE_BUILD_TYPE="$MLA_BUILD_TYPE" -DMLA_BACKEND="$MLA_NATIVE_BACKEND")
  if [ "$MLA_NATIVE_BACKEND" = cuda ]; then
    args+=(-DCMAKE_CUDA_ARCHITECTURES="${MLA_CUDA_ARCH:-90a}")
  fi
  mla_configure "$MLA_BUILD_DIR" "${args[@]}"
}
