#!/usr/bin/env bash
# Twenty-sixth session, last device call: the final tree (530760d's kernels, validated in the
# second call, plus the bf16 table change): the whole GPU suite, then a checked mla_bench over
# bf16 (the eight competition shapes; every element against the host reference).
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/final; mkdir -p "$L"
trap 'tar -czf "$OUT/final.tgz" -C "$OUT" final && rm -rf "$L"' EXIT
B=$(mktemp -d /tmp/final_build.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 200 cmake --build "$B" -j16) > "$L/build.log" 2>&1 \
  || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "built $SECONDS s"
timeout 60 "$B/bench/mla_bench" --mla_formats=bf16 --mla_iters=20 \
  '--benchmark_filter=bs(4|32|64|256)/kv(1024|8192)/h16/q1/it' "--mla_csv=$L/mla_bench_bf16.csv" \
  > "$L/mla_bench_bf16.log" 2>&1
echo "mla_bench rc=$? $SECONDS s"; grep -E '^\|' "$L/mla_bench_bf16.log" | cut -d'|' -f2,3,4,9,10,14,15,16,20
timeout 190 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$L/suite" \
  > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
