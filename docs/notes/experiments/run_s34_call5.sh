#!/usr/bin/env bash
# Thirty-fourth session, call 5 (~420 s): the final tree (kOwnPageLanes = 8 for 64 rows of fp8 on
# pages of 1, 2, 4, 8 tokens; its PTX equals call 4's side B): build, the whole GPU suite,
# memcheck and synccheck of GpuRows64 (the new copies), a checked mla_bench of the new path (every
# element against the host reference: bf16 Q and FP8_MMA on 1- / 2- / 8-token pages).
set -u
OUT=${OUT:-/tmp/out}
B=$(mktemp -d /tmp/final_build.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 240 cmake --build "$B" -j16) > "$OUT/build.log" 2>&1 \
  || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; exit 1; }
echo "built $SECONDS s"
timeout 200 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$OUT/suite" \
  > "$OUT/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$OUT/suite.log" | tail -4
MLA_SANITIZE_TIMEOUT=90 bash docs/notes/experiments/run_sanitize.sh "$B" 'GpuRows64.*' \
  memcheck synccheck
echo "sanitize $SECONDS s"
timeout 90 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma --mla_iters=5 \
  --mla_shapes=bs8/kv4096/h128/q1/page1,bs8/kv4096/h128/q1/page2/ordered,bs16/kv2048/h16/q4/page8,bs4/kvuneven3000/h128/q2/page4 \
  "--mla_csv=$OUT/checked.csv" > "$OUT/checked.log" 2>&1
echo "checked bench rc=$? $SECONDS s"
grep -E '^\|' "$OUT/checked.log" | cut -d'|' -f2,3,4,9,10,12,14,15,16,20 | head -12
grep -E "cases ran" "$OUT/checked.log"
