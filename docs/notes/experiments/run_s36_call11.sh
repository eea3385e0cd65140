#!/usr/bin/env bash
# Thirty-sixth session, call 11 (~120 s): the cold review's bug (an empty element's CTAs read a
# page list ahead of the tile loop: past the list, or NULL in an empty pool) and its test,
# GpuRows64.EmptyElementsFp8Mma: on the fixed tree as planned, forced to wgmma and under
# memcheck; then on the tree with the guard removed (the failure the test must show).
set -u
OUT=${OUT:-/tmp/out}
. docs/notes/experiments/build_bench.sh
S=$(mktemp -d /tmp/noguard.XXXXXX)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$S"
sed -i 's/if (p.page_indptr != nullptr \&\& rows.n_tiles > 0) {/if (p.page_indptr != nullptr) {/' \
  "$S/kernels/splitkv/stage1/wgmma.h"
grep -c "rows.n_tiles > 0) {" "$S/kernels/splitkv/stage1/wgmma.h"
(cmake -S "$S" -B "$S/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 200 cmake --build "$S/b" -j8 --target test_gpu_paths) \
  > "$OUT/build_noguard.log" 2>&1 &
nb=$!
B=$(build_tree test_gpu_paths 200) || exit 1
echo "built $SECONDS s"
F='GpuRows64.EmptyElementsFp8Mma'
(cd "$B/tests" && timeout 60 ./test_gpu_paths --gtest_filter=$F) > "$OUT/empty.log" 2>&1
echo "planned rc=$? $SECONDS s"; grep -E "route|OK|FAIL|PASSED" "$OUT/empty.log" | head -12
(cd "$B/tests" && MLA_DECODE_STAGE1=wgmma timeout 60 ./test_gpu_paths --gtest_filter=$F) \
  > "$OUT/empty_wgmma.log" 2>&1
echo "forced rc=$? $SECONDS s"; tail -2 "$OUT/empty_wgmma.log"
MLA_SANITIZE_TIMEOUT=60 bash docs/notes/experiments/run_sanitize.sh "$B" "$F" memcheck
wait $nb; echo "noguard build rc=$? $SECONDS s"
mkdir -p "$OUT/noguard"
(cd "$S/b/tests" && timeout 60 ./test_gpu_paths --gtest_filter=$F) > "$OUT/noguard/empty.log" 2>&1
echo "noguard planned rc=$? $SECONDS s"; grep -E "FAIL|PASSED|error" "$OUT/noguard/empty.log" | head -5
OUT=$OUT/noguard MLA_SANITIZE_TIMEOUT=60 bash docs/notes/experiments/run_sanitize.sh "$S/b" "$F" \
  memcheck
grep -m3 "Invalid\|out of bounds\|Address" "$OUT/noguard/sanitize-memcheck.log"
echo "total $SECONDS s"
