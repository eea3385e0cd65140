#!/usr/bin/env bash
# Thirty-seventh session, call 8 (~520 s; carry build-peers): settled maxima in the 32-row solo
# consumers validated: run_validate.sh (library build, whole GPU suite, checked mla_bench over
# e4m3fn / fp8 Q / FP8_MMA, FlashMLA beside it); then the new test
# GpuRows16And32.SettledMaximaMoveLate on a tree whose lazy-bound test never fires (the test
# must fail there), and under compute-sanitizer memcheck on the validated build.
set -u
OUT=${OUT:-/tmp/out}
timeout 330 bash docs/notes/experiments/run_validate.sh
echo "validate rc=$? $SECONDS s"
B=$(ls -dt /tmp/validate_build.* | head -1)
S=$(mktemp -d /tmp/nobound.XXXXXX)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$S"
sed -i 's/sc\[jj\].y) > Cfg::kLazyLog2;/sc[jj].y) > 1e30f;/' "$S/kernels/splitkv/stage1/wgmma.h"
grep -c "> 1e30f;" "$S/kernels/splitkv/stage1/wgmma.h"
(cmake -S "$S" -B "$S/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 150 cmake --build "$S/b" -j16 --target test_gpu_paths) \
  > "$OUT/build_nobound.log" 2>&1
echo "nobound build rc=$? $SECONDS s"
F='GpuRows16And32.SettledMaximaMoveLate'
mkdir -p "$OUT/nobound"
(cd "$S/b/tests" && timeout 60 ./test_gpu_paths --gtest_filter=$F) > "$OUT/nobound/settled.log" 2>&1
echo "nobound rc=$? (must fail) $SECONDS s"
grep -E "route|FAIL|PASSED|worst|Failure" "$OUT/nobound/settled.log" | head -12
MLA_SANITIZE_TIMEOUT=90 bash docs/notes/experiments/run_sanitize.sh "$B" "$F" memcheck
echo "total $SECONDS s"
