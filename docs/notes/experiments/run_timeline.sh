#!/usr/bin/env bash
# One device call: build mla_bench with the timeline patch and print the wgmma stage-1 timeline
# of CTA 0 (its 6th call) for each case given (default: the 64-, 32- and 16-row engine shapes).
#   bash docs/notes/experiments/run_timeline.sh [CASE ...]   (CASE: a shape tag, e.g.
#   bs64/kv4096/h128/q1 or bs32/kv8192/h16/q1/page16, run by --mla_shapes)
# $MLA_TL_FORMAT: the mla_bench format (fp8_e4m3fn unless set; e.g. fp8_e4m3fn_qfp8_mma for
# FP8_MMA's e4m3 scores, bf16, mxfp4).
# $MLA_TL_PATCH: a kernel experiment applied first (its timeline instead of the tree's).
# $MLA_TL_TIMELINE: the timeline patch, a path from the repository root
# (docs/notes/experiments/exp_timeline_s36.patch unless set: the tree since 0.7.19, seesaw and
# solo consumers, producer; exp_timeline.patch is the tenth session's, for trees of then).
# $MLA_TL_CHUNKS=1 (exp_timeline_chunks.patch, a stamp after each of the 9 chunks of
# score_products) is stale: that patch applies only to the tenth session's tree, so it is
# refused here unless $MLA_TL_TIMELINE names a patch on purpose.
# Everything lands in $OUT/timeline.tgz (the device returns at most 8 files).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/timeline"
FORMAT=${MLA_TL_FORMAT:-fp8_e4m3fn}
cases=("$@"); [ ${#cases[@]} -gt 0 ] || cases=(bs64/kv4096/h128/q1 bs128/kv4096/h16/q4
  bs128/kv4096/h16/q2 bs256/kv8192/h16/q1 bs32/kv8192/h16/q1)
TLP=${MLA_TL_TIMELINE:-docs/notes/experiments/exp_timeline_s36.patch}
if [ -n "${MLA_TL_CHUNKS:-}" ] && [ -z "${MLA_TL_TIMELINE:-}" ]; then
  echo "MLA_TL_CHUNKS: exp_timeline_chunks.patch is stale (the tenth session's tree); set" \
    "MLA_TL_TIMELINE=docs/notes/experiments/exp_timeline_chunks.patch to try it anyway"
  exit 2
fi
S=$(mktemp -d /tmp/tl_src.XXXXXX)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$S"
if [ -n "${MLA_TL_PATCH:-}" ]; then
  (cd "$S" && patch -s -p1 < "$(realpath -e "$ROOT/$MLA_TL_PATCH")") || exit 1
fi
(cd "$S" && patch -s -p1 < "$(realpath -e "$ROOT/$TLP")") || exit 1
echo "timeline patch: $TLP; format $FORMAT"
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
  # --mla_extra: the fp8-Q formats (fp8_e4m3fn_qfp8_mma, ...) run only with it. The case is
  # the one shape of --mla_shapes (any tag, paged ones too), the filter only picks the format.
  timeout 60 "$S/b/bench/mla_bench" "--mla_formats=$FORMAT" --mla_extra --mla_iters=8 \
    --mla_no_check "--mla_shapes=$c" "--benchmark_filter=^decode/$FORMAT/" > "$f.raw" 2>&1
  kill $smi 2>/dev/null
  grep -E "^TL" "$f.raw" > "$f"; grep -v -E "^TL " "$f.raw" > "$f.bench"; rm -f "$f.raw"
  grep TLHDR "$f.bench" || echo "no TLHDR (fewer than 7 stage-1 calls, or no wgmma kernel?)"
  grep -E "decode/" "$f.bench" | head -3
  awk -F', ' 'NR > 1 && $2 + 0 > 0 {n++; c += $2; if ($2 + 0 < m || m == 0) m = $2 + 0}
    END {if (n) printf "nvidia-smi: SM clock mean %.0f MHz, min %d over %d samples\n",
                       c / n, m, n}' "$f.smi"
  [ -s "$f" ] || continue
  python3 "$ROOT/docs/notes/experiments/timeline_parse.py" "$f" > "$f.summary"
  echo "== $c"; sed -n 1,40p "$f.summary" | grep -v "^  r[0-9]"
done
echo "total $SECONDS s"
