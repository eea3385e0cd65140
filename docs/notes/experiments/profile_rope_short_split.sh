#!/usr/bin/env bash
# One device call (~300 s): why the 8-row rope copies (acdcd2e) lose 2-6 % on splits of <= 1024
# tokens while they win on long ones (notes, "Sixth session"). Builds the tree (8-row copies) and
# the tree with exp_rope_per_row.patch (the 4-lane copy per row of 4ba3e82), then for each:
# Nsight Compute on stage 1 of bs4 kv8192 H16 (32 splits of 256 tokens) and of bs256 kv8192 H16
# (single split, 8192 tokens), the SASS-line summary (bench/ncu_sass_summary.py) and a few
# counters: the first tile's arrival and the consumers' first waits are the suspects.
# Run from the repository root on the GPU machine; logs in one tarball under $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$(mktemp -d)
CM="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda"
ROOT=$(pwd)
trap 'tar -czf "$OUT/rope_profile.tgz" -C "$W" .' EXIT
rm -rf /tmp/src-row && mkdir -p /tmp/src-row
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/src-row
(cd /tmp/src-row && patch -p1 < docs/notes/experiments/exp_rope_per_row.patch) > "$W/patch.log" 2>&1 ||
  { echo "PATCH FAILED"; exit 1; }
build() {
  (cmake -S "$1" -B "$2" $CM && timeout 200 cmake --build "$2" -j8 --target mla_bench) \
    > "$W/build-$(basename "$2").log" 2>&1
}
build "$ROOT" /tmp/b-8rows & build /tmp/src-row /tmp/b-perrow & wait
echo "builds $SECONDS s"
for side in 8rows perrow; do
  for shape in bs4/kv8192/h16/q1/ bs256/kv8192/h16/q1/; do
    tag=$side-$(echo "$shape" | tr '/' '_')
    timeout 120 ncu --kernel-name regex:stage1_wgmma --launch-skip 1 --launch-count 1 --set full \
      --import-source no -o "$W/$tag" /tmp/b-$side/bench/mla_bench --mla_formats=fp8_e4m3fn \
      --mla_iters=2 --mla_no_check "--benchmark_filter=fp8_e4m3fn/$shape" > "$W/$tag.log" 2>&1
    ncu -i "$W/$tag.ncu-rep" --page source --csv --print-source sass > "$W/$tag.csv" 2>/dev/null
    python3 bench/ncu_sass_summary.py "$W/$tag.csv" --top 15 > "$W/$tag.summary" 2>&1
    ncu -i "$W/$tag.ncu-rep" --page details --csv > "$W/$tag.details.csv" 2>/dev/null
    echo "== $tag $SECONDS s"; head -25 "$W/$tag.summary"
    grep -E '"Duration"|"Elapsed Cycles"|"L1/TEX Hit Rate"|"Mem Busy"' "$W/$tag.details.csv" | head -6
  done
done
echo "total $SECONDS s"
