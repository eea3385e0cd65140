#!/usr/bin/env bash
# Checks a prepared experiment for correctness on the CPU, no device call: applies PATCH to a
# copy of the checkout (build folders and .git left out), builds the emulated sm_90a there
# (MLA_BACKEND=emu, MLA_EMU_TARGET=sm90a: the NVIDIA kernels over emulated PTX,
# docs/notes/emu.md) and runs the ctest regex on it. Forty-fifth session.
#   bash docs/notes/experiments/emu_check_patch.sh PATCH 'CTEST_REGEX' [WORKDIR]
# e.g. 'GpuVectors\.ReproduceKnownAnswers$|^GpuRows64\.' for a 64-row change. Suffixed
# registrations (.stage1_mma16, .notma, .one_split, ...) match a regex without a `$`. Run from
# the repository root; logs and the build in WORKDIR (default /tmp/emu_check.<patch name>).
# Several minutes on 2 cores: the build (~2 min), then the tests (seconds to ~2 min each).
set -u
patch=$(realpath -e "$1") || exit 1
regex=$2
work=${3:-/tmp/emu_check.$(basename "$patch" .patch)}
src=$work/src bld=$work/build log=$work/log.txt
rm -rf "$src" && mkdir -p "$src" || exit 1
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src"
(cd "$src" && patch -p1 --batch < "$patch") > "$log" 2>&1 || { echo "PATCH FAILED: $log"; exit 1; }
cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLA_BACKEND=emu \
  -DMLA_EMU_TARGET=sm90a -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 \
  -DMLA_BUILD_BENCH=OFF >> "$log" 2>&1 || { echo "CONFIGURE FAILED: $log"; exit 1; }
cmake --build "$bld" --parallel 2 >> "$log" 2>&1 || { echo "BUILD FAILED: $log"; exit 1; }
(cd "$bld" && ctest -R "$regex" -j2 --timeout 900 --output-on-failure) >> "$log" 2>&1
rc=$?
grep -E 'tests passed|Failed|\*\*\*' "$log" | tail -20
echo "ctest exit $rc; log: $log"
exit "$rc"
