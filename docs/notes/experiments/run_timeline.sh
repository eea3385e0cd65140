#!/usr/bin/env bash
# One device call: build mla_bench with exp_timeline.patch and print the wgmma stage-1 timeline
# of CTA 0 (its 6th call) for each case given (default: the 64-, 32- and 16-row engine shapes).
#   bash docs/notes/experiments/run_timeline.sh [CASE ...]   (CASE like bs64/kv4096/h128/q1)
# $MLA_TL_PATCH: a kernel experiment applied first (its timeline instead of the tree's).
# $MLA_TL_CHUNKS=1: exp_timeline_chunks.patch instead of exp_timeline.patch (adds a stamp after
# each of the 9 chunks of score_products).
# Everything lands in $OUT/timeline.tgz (the device returns at most 8 files).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/timeline"
FORMAT=${MLA_TL_FORMAT:-fp8_e4m3fn}
cases=("$@"); [ ${#cases[@]} -gt 0 ] || cases=(bs64/kv4096/h128/q1 bs128/kv4096/h16/q4
  bs128/kv4096/h16/q2 bs256/kv8192/h16/q1 bs32/kv8192/h16/q1)
S=$(mktemp -d /tmp/tl_src.XXXXXX)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$S"
if [ -n "${MLA_TL_PATCH:-}" ]; then
  (cd "$S" && patch -s -p1 < "$(realpath -e "$ROOT/$MLA_TL_PATCH")") || exit 1
fi
TLP=exp_timeline.patch; [ -n "${MLA_TL_CHUNKS:-}" ] && TLP=exp_timeline_chunks.patch
(cd "$S" && patch -s -p1 < "$ROOT/docs/notes/experiments/$TLP") || exit 1
trap 'tar -czf "$OUT/timeline.tgz" -C "$OUT" timeline && rm -rf "$OUT/timeline"' EXIT
(cmake -S "$S" -B "$S/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 300 cmake --build "$S/b" -j16 --target mla_bench) \
  > "$OUT/timeline/build.log" 2>&1 || { tail -30 "$OUT/timeline/build.log"; exit 1; }
echo "built $SECONDS s"
for c in "${cases[@]}"; do
  f=$OUT/timeline/$(echo "$c" | tr / _).txt
  # SM clock and power while it runs (is the chip throttled under the full load?)
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,power.draw,temperature.gpu \
    --format=csv -lms 50 > "$f.smi" 2>&1 &
  smi=$!
  timeout 60 "$S/b/bench/mla_bench" "--mla_formats=$FORMAT" --mla_extra --mla_iters=8 \
    --mla_no_check "--benchmark_filter=decode/$FORMAT/$c/" > "$f.raw" 2>&1
  kill $smi 2>/dev/null
  grep -E "^TL" "$f.raw" > "$f"; grep -v -E "^TL " "$f.raw" > "$f.bench"; rm -f "$f.raw"
  grep TLHDR "$f.bench"; grep -E "decode/" "$f.bench" | head -3
  awk -F', ' 'NR > 1 && $2 + 0 > 0 {n++; c += $2; if ($2 + 0 < m || m == 0) m = $2 + 0}
    END {if (n) printf "nvidia-smi: SM clock mean %.0f MHz, min %d over %d samples\n",
                       c / n, m, n}' "$f.smi"
  python3 "$ROOT/docs/notes/experiments/timeline_parse.py" "$f" > "$f.summary"
  echo "== $c"; sed -n 1,40p "$f.summary" | grep -v "^  r[0-9]"
done
echo "total $SECONDS s"
