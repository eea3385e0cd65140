#!/usr/bin/env bash
# The test command: set up, build and test the native backend, then the AMD compile check.
#
#   tests/run.sh [extra ctest arguments for the native build]
#
# 1. Installs missing Debian packages with apt-get where it can (root or passwordless sudo);
#    where it cannot (no apt-get, no registry) it goes on with what is there.
# 2. Native build in $MLA_BUILD_DIR (default build/): backend cuda (sm_90a) when nvcc exists,
#    else none; builds everything and runs ctest (GPU tests skip without a GPU). Then the host
#    code (backend none) built with ThreadSanitizer in $MLA_TSAN_BUILD_DIR (default build-tsan/)
#    and every host test run in it (the thread-safety stress test among them; not the installed
#    package's consumer, which is not instrumented): its tests take ~1.5 minutes on 2 cores,
#    after its build. Skipped with a notice where a ThreadSanitizer program cannot run;
#    MLA_SKIP_TSAN=1 skips it on purpose.
# 3. AMD compile check in $MLA_HIP_BUILD_DIR (default build-hip/): backend hip through Debian's
#    clang-19 for gfx940 (library, tests and benchmark compiled and linked; its ctest run, GPU
#    tests skip), plus the gfx942 device-only assembly of every kernel, and the gfx950 (MI355)
#    one through Debian's clang-22 ($MLA_HIP_NEW_CXX; clang-19 does not know gfx950). Skipped
#    with a notice when the toolchain is not available here, unless MLA_REQUIRE_HIP=1 (then it
#    fails). MLA_SKIP_HIP=1 skips it on purpose (still fails under MLA_REQUIRE_HIP=1).
# 4. The AMD path run on the CPU, in $MLA_EMU_BUILD_DIR (default build-emu/): backend emu
#    (kernels/arch/emu/simt.h: the kernels and arch/amd/cdna3.h compiled as host C++ by the
#    same clang-19 and run on an emulated gfx942), and the GPU suites' tests whose shapes take
#    seconds there (MLA_EMU_TESTS and MLA_EMU_FORCED_TESTS, ctest regexes), then some of them
#    again with each workgroup's work-items resumed in reverse order (MLA_EMU_REVERSE_TESTS;
#    simt.cpp). It needs only clang-19: it runs where step 3 found its toolchain, and is
#    skipped without it (MLA_SKIP_EMU=1 skips it alone).
# 5. The NVIDIA path run on the CPU, in $MLA_EMU_SM90_BUILD_DIR (default build-emu-sm90/): the
#    same backend with MLA_EMU_TARGET=sm90a (arch/nvidia/sm80.h and sm90.h over emulated PTX:
#    mma.sync, wgmma, mbarriers, cp.async, bulk and tensor copies), so the stage-1 wgmma kernels
#    run: MLA_EMU_SM90_TESTS, MLA_EMU_SM90_FORCED_TESTS, then MLA_EMU_REVERSE_TESTS in reverse
#    order. Same toolchain and skips as step 4 (MLA_SKIP_EMU_SM90=1 skips it alone).
# 6. Summary: each build's test counts (ran, passed, failed, skipped: the GPU tests skip without
#    a GPU) and the AMD check's result.
# See tests/setup.sh for the other environment variables. Exits non-zero on any failure.
set -euo pipefail
# shellcheck source=tests/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

mla_banner "setup"
mla_setup_native tests

mla_banner "native build ($MLA_NATIVE_BACKEND, $MLA_BUILD_TYPE) in $MLA_BUILD_DIR"
mla_configure_native
cmake --build "$MLA_BUILD_DIR" --parallel "$MLA_JOBS"
mla_banner "native tests"
native_result="passed"
mla_ctest "native ($MLA_NATIVE_BACKEND) tests" "$MLA_BUILD_DIR" "$@" || native_result="FAILED"

if [ "${MLA_SKIP_TSAN:-0}" = 1 ]; then
  tsan_result="skipped (MLA_SKIP_TSAN=1)"
elif ! mla_tsan_runs; then
  tsan_result="skipped: a -fsanitize=thread program does not build or run here"
else
  mla_banner "ThreadSanitizer build of the host code (backend none) in $MLA_TSAN_BUILD_DIR"
  mla_configure "$MLA_TSAN_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLA_BACKEND=none \
    -DMLA_SANITIZE_THREAD=ON -DMLA_BUILD_BENCH=OFF
  cmake --build "$MLA_TSAN_BUILD_DIR" --parallel "$MLA_JOBS"
  mla_banner "ThreadSanitizer tests"
  tsan_result="passed"
  # Not the installed-consumer tests (their programs are not instrumented) nor the Python
  # package (an uninstrumented interpreter loading the instrumented library).
  mla_ctest "ThreadSanitizer (host) tests" "$MLA_TSAN_BUILD_DIR" \
    -E '^(install_|python_package$)' || tsan_result="FAILED"
fi

hip_result=""
hip_new_result=""
if [ "${MLA_SKIP_HIP:-0}" = 1 ]; then
  hip_result="skipped (MLA_SKIP_HIP=1)"
else
  mla_banner "AMD compile check: setup"
  if ! mla_setup_hip; then
    hip_result="skipped: no clang-19 + HIP toolchain here (Debian: ${MLA_HIP_PACKAGES[*]})"
  elif ! mla_setup_hip_new; then
    hip_new_result="skipped: no $MLA_HIP_NEW_CXX here (Debian: ${MLA_HIP_NEW_PACKAGES[*]})"
  fi
fi

if [ -z "$hip_result" ]; then
  new_args=(-DMLA_HIP_DEVICE_CHECK_NEW_ARCHS="")
  checks="gfx942"
  if [ -z "$hip_new_result" ]; then
    new_args=(-DMLA_HIP_DEVICE_CHECK_NEW_ARCHS="$MLA_HIP_NEW_ARCHS"
              -DMLA_HIP_DEVICE_CHECK_NEW_COMPILER="$MLA_HIP_NEW_CXX")
    checks="gfx942, $MLA_HIP_NEW_ARCHS via $MLA_HIP_NEW_CXX"
  fi
  mla_banner "AMD compile check: hip backend via $MLA_HIP_CXX for gfx940, in $MLA_HIP_BUILD_DIR"
  mla_configure "$MLA_HIP_BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLA_BACKEND=hip -DMLA_HIP_COMPILE=cxx -DMLA_ROCM_PATH=/usr \
    -DCMAKE_CXX_COMPILER="$MLA_HIP_CXX" -DCMAKE_C_COMPILER="$MLA_HIP_CC" \
    -DCMAKE_HIP_ARCHITECTURES=gfx940 -DMLA_HIP_DEVICE_CHECK_ARCHS=gfx942 "${new_args[@]}"
  # Everything, the device-code check (target mla_hip_device_check: $checks) included.
  cmake --build "$MLA_HIP_BUILD_DIR" --parallel "$MLA_JOBS"
  cmake --build "$MLA_HIP_BUILD_DIR" --target mla_hip_device_check
  mla_banner "AMD compile check: ctest (no AMD GPU here: GPU tests skip)"
  hip_result="passed (gfx940 build + tests, device code: $checks)"
  mla_ctest "AMD (hip, gfx940) tests" "$MLA_HIP_BUILD_DIR" || hip_result="FAILED (gfx940 tests)"
fi

# The GPU tests run on the emulated devices: those whose cases take seconds there. Every format,
# heads 8-128, q_len 1-4 and mixed, paged caches (shuffled, sentinel tails), tile and split
# boundaries, row strides, split forms, fp8 Q, MXFP4's extreme scales, a bf16 rope, 131k tokens,
# caches past 2 GiB, the plan API, graphs, threads, the fp64 known answers. Left out, at 1-4
# minutes each there: the competition grid, batch 1024, the 16- to 64-row sweeps, the
# batch-invariant suite (docs/notes/emu.md).
emu_common='GpuVectors\.|Formats/GpuFormat\.[^C]|AllFormats/GpuFormatHeads\.|GpuBadInput\.'
emu_common+='|GpuPlanApi\.|GpuPlans\.|Threads\.|[A-Za-z0-9]+/SplitForms\.|Outputs/|LseStride\.'
emu_common+='|AllFormats/GpuPathsFormat\.(SingleElement|ShuffledPages|LargeShuffledPages)'
emu_common+='|Mxfp4/GpuMxfp4Extremes\.|Steps/GpuGraph\.|PastTwoGiB/|GpuLong\.(Kv131072|OneElement)'
emu_common+='|GpuLongCta\.|Fp8Q/GpuFp8Query\.|Fp8LatentHeadsPaging/'
# gfx942: those; forced (MLA_EMU_FORCED_TESTS), mma16's e4m3fnuz MFMA scores (GpuFp8Mma's
# .stage1_mma16: plans take them only forced), and mma16's two row groups a CTA on the known
# answers, every format x heads x q_len and the bf16 rope (.stage1_mma16_rows32).
MLA_EMU_TESTS="${MLA_EMU_TESTS:-^($emu_common)}"
emu_amd_forced='^(GpuFp8Mma\..*\.stage1_mma16|.*\.stage1_mma16_rows32)$'
MLA_EMU_FORCED_TESTS="${MLA_EMU_FORCED_TESTS:-$emu_amd_forced}"
# sm_90a, whose planner takes wgmma wherever it serves (the wgmma kernels at 16 / 32 / 64 rows,
# long CTAs, TMA and copies, e4m3 scores): those and two 64-row suites, without the suffixed
# registrations (tests/CMakeLists.txt); of those, MLA_EMU_SM90_FORCED_TESTS: mma16 forced
# (mma.sync) on the known answers and uneven lengths (at 16 rows, and at 32 and 64: its row
# groups; with e4m3 scores and the bf16 rope too), long CTAs and 64 rows with TMA off, wgmma's
# fp8 + bf16-rope kernels (both flavours) and its MXFP4-key + fp8-V kernels (the known answers,
# heads x q_len, shuffled pages, the MXFP4 extremes but code 255's) at each of their rows
# (.stage1_wgmma_rows16 / 32 / 64). The balanced schedule's suite at the planner's rows (~80 s
# there; not its .rows16/32/64).
emu_sm90="^($emu_common|GpuFp8Mma\.|GpuRows64\.(EmptyElementsFp8Mma|PagedSplitCtas)\$"
emu_sm90+="|GpuBalanced\.[A-Za-z]+\$)"
MLA_EMU_SM90_TESTS="${MLA_EMU_SM90_TESTS:-$emu_sm90}"
emu_forced='^(GpuVectors\..*\.stage1_mma16'
emu_forced+='|AllFormats/GpuFormatHeads\.UnevenLengths/.*\.stage1_mma16'
emu_forced+='|GpuLongCta\..*\.notma_one_split|GpuRows64\.EmptyElementsFp8Mma\.notma'
emu_forced+='|(GpuVectors\.|AllFormats/GpuFormatHeads\.UnevenLengths/|GpuFp8Mma\.)'
emu_forced+='.*\.stage1_mma16_rows(32|64)'
emu_forced+='|Fp8LatentHeadsPaging/.*_h128_paged_plan.*\.stage1_mma16_rows(32|64)'
emu_forced+='|(GpuBf16Rope[A-Za-z0-9]*\.[A-Za-z0-9]+'
emu_forced+='|Fp8LatentHeadsPaging/GpuBf16Rope\..*fp8_e4m3fn(uz)?_h.*'
emu_forced+='|GpuVectors\.[A-Za-z]+'
emu_forced+='|AllFormats/GpuFormatHeads\.(UnevenLengths|MixedQueryLengths[A-Za-z]*)/mxfp4_k_fp8.*'
emu_forced+='|AllFormats/GpuPathsFormat\.ShuffledPages[A-Za-z]*/mxfp4_k_fp8.*'
emu_forced+='|Mxfp4/GpuMxfp4Extremes\.(Zero|ScaleRows|ScaleTensor|ScaleCode254)[A-Za-z0-9]*'
emu_forced+='/mxfp4_k_fp8.*)'
emu_forced+='\.stage1_wgmma_rows(16|32|64))$'
MLA_EMU_SM90_FORCED_TESTS="${MLA_EMU_SM90_FORCED_TESTS:-$emu_forced}"
emu_suffixed='\.(stage1_[a-z0-9_]+|one_split|nopdl|notma|notma_one_split)$'
# the reverse-order runs keep the row registrations (.stage1_mma16_rows32 / 64: Q and the
# groups' partial scores handed between warps through shared memory; .stage1_wgmma_rows16 / 32 /
# 64 of the bf16 rope's suite)
emu_reverse_suffixed='\.(stage1_[a-z0-9]+|one_split|nopdl|notma|notma_one_split)$'
# and on both, some again with the work-items of each workgroup in reverse order:
emu_reverse='^(GpuVectors\.|Formats/GpuFormat\.[^C]|AllFormats/GpuFormatHeads\.UnevenLengths/'
emu_reverse+='|Fp8LatentHeadsPaging/GpuBf16Rope\..*fp8_e4m3fn_h(16|128)_fwd)'
MLA_EMU_REVERSE_TESTS="${MLA_EMU_REVERSE_TESTS:-$emu_reverse}"

# emu_run <target> <label> <build dir> <skip variable> <tests> <forced tests>: builds the
# emulated <target> and runs its tests (not their suffixed registrations: emu_suffixed) and the
# forced ones (suffixed registrations), then MLA_EMU_REVERSE_TESTS (and their mma16 row-group
# registrations) with each workgroup's work-items resumed in reverse order (simt.cpp: a kernel
# that reads shared memory another work-item writes without a barrier between sees other data
# in one of the two orders). Sets
# emu_result.
emu_run() {
  local target="$1" label="$2" dir="$3" skip="$4" tests="$5" forced="$6"
  if [ "${!skip:-0}" = 1 ]; then
    emu_result="skipped ($skip=1)"
    return
  elif ! command -v "$MLA_HIP_CXX" >/dev/null 2>&1 || ! command -v "$MLA_HIP_CC" >/dev/null 2>&1
  then
    emu_result="skipped: no $MLA_HIP_CXX here"
    return
  fi
  mla_banner "the $label path on an emulated $target (backend emu, $MLA_HIP_CXX) in $dir"
  mla_configure "$dir" -DCMAKE_BUILD_TYPE=Release -DMLA_BACKEND=emu -DMLA_EMU_TARGET="$target" \
    -DCMAKE_CXX_COMPILER="$MLA_HIP_CXX" -DCMAKE_C_COMPILER="$MLA_HIP_CC" -DMLA_BUILD_BENCH=OFF
  cmake --build "$dir" --parallel "$MLA_JOBS"
  emu_result="passed"
  mla_ctest "emulated $label (emu, $target) GPU tests" "$dir" --timeout 300 -R "$tests" \
    -E "$emu_suffixed" || emu_result="FAILED"
  mla_ctest "emulated $label (emu, $target) GPU tests, forced variants" "$dir" --timeout 300 \
    -R "$forced" || emu_result="FAILED"
  MLA_EMU_ORDER=reverse mla_ctest "emulated $label (emu, $target, reverse order) GPU tests" \
    "$dir" --timeout 300 -R "$MLA_EMU_REVERSE_TESTS" -E "$emu_reverse_suffixed" ||
    emu_result="FAILED"
}
emu_run gfx942 AMD "$MLA_EMU_BUILD_DIR" MLA_SKIP_EMU "$MLA_EMU_TESTS" "$MLA_EMU_FORCED_TESTS"
emu_amd_result="$emu_result"
emu_run sm90a NVIDIA "$MLA_EMU_SM90_BUILD_DIR" MLA_SKIP_EMU_SM90 "$MLA_EMU_SM90_TESTS" \
  "$MLA_EMU_SM90_FORCED_TESTS"
emu_nvidia_result="$emu_result"

mla_banner "summary"
failed=0
for counts in "${MLA_TEST_COUNTS[@]}"; do mla_log "$counts"; done
if [ "${#MLA_TEST_COUNTS[@]}" -gt 0 ]; then
  mla_log "(skipped: the GPU tests where no GPU of the build's kind is present, and the few tests"
  mla_log " of a GPU-less build in a GPU build; each skipped test prints its reason)"
fi
mla_log "native ($MLA_NATIVE_BACKEND): $native_result"
[ "$native_result" = passed ] || failed=1
case "$tsan_result" in
  passed) mla_log "ThreadSanitizer (host): passed" ;;
  FAILED) mla_log "ThreadSanitizer (host): FAILED"; failed=1 ;;
  *) mla_log "NOTICE: ThreadSanitizer (host) $tsan_result" ;;
esac
# A part of the AMD check that did not run: an error under MLA_REQUIRE_HIP=1, else a notice.
not_run() {
  if [ "${MLA_REQUIRE_HIP:-0}" = 1 ]; then
    mla_log "$1: $2"
    mla_log "error: MLA_REQUIRE_HIP=1 requires the $1"
    failed=1
  else
    mla_log "NOTICE: $1 $2"
  fi
}
case "$hip_result" in
  passed*) mla_log "AMD compile check: $hip_result" ;;
  FAILED*) mla_log "AMD compile check: $hip_result"; failed=1 ;;
  *) not_run "AMD compile check" "$hip_result" ;;
esac
[ -z "$hip_new_result" ] || not_run "AMD device check of $MLA_HIP_NEW_ARCHS" "$hip_new_result"
for emu in "AMD (emu, gfx942):$emu_amd_result" "NVIDIA (emu, sm_90a):$emu_nvidia_result"; do
  case "${emu#*:}" in
    passed) mla_log "emulated ${emu%%:*}: passed" ;;
    FAILED) mla_log "emulated ${emu%%:*}: FAILED"; failed=1 ;;
    *) not_run "emulated ${emu%%:*} run" "${emu#*:}" ;;
  esac
done
exit "$failed"
