#!/usr/bin/env bash
# One device call (~560 s, carry build-peers): run_validate.sh, then on its build while time is
# left:
#   1. compute-sanitizer memcheck + synccheck over $MLA_MORE_SANITIZE (a test_gpu_paths filter;
#      'GpuRows16And32.*:GpuLongCta.*' unless set);
#   2. a checked mla_bench of the formats in $MLA_MORE_FORMATS (fp8_e4m3fnuz,mxfp4,bf16 unless
#      set) on $MLA_MORE_FILTER (the competition shapes unless set; --mla_extra, so q_len 2-4
#      and H128 shapes may be named);
#   3. bench/split_sweep.sh (2..64 splits) on $MLA_MORE_SWEEP (a benchmark filter; none unless
#      set; q_len 2-4 shapes need --mla_extra, which split_sweep.sh does not pass).
set -u
OUT=${OUT:-/tmp/out}; E=docs/notes/experiments
timeout 400 bash $E/run_validate.sh
b=$(ls -d /tmp/validate_build.* | head -1)
[ -x "$b/tests/test_gpu_paths" ] || { echo "no build"; exit 1; }
if [ $SECONDS -lt 460 ]; then
  MLA_SANITIZE_TIMEOUT=$(( (530 - SECONDS) / 3 )) bash $E/run_sanitize.sh "$b" \
    "${MLA_MORE_SANITIZE:-GpuRows16And32.*:GpuLongCta.*}" memcheck synccheck
  echo "sanitize $SECONDS s"
fi
C=${MLA_MORE_FILTER:-'bs(4|32|64|256)/kv(1024|8192)/h16/q1/it'}
if [ $SECONDS -lt 500 ]; then
  timeout $((555 - SECONDS)) "$b/bench/mla_bench" \
    "--mla_formats=${MLA_MORE_FORMATS:-fp8_e4m3fnuz,mxfp4,bf16}" --mla_extra --mla_iters=20 \
    "--benchmark_filter=$C" "--mla_csv=$OUT/other_formats_checked.csv" \
    > "$OUT/other_formats_checked.log" 2>&1
  echo "other formats checked rc=$? $SECONDS s"
  grep -E '^\|' "$OUT/other_formats_checked.log" | cut -d'|' -f2,3,4,9,10,12,14 | head -30
fi
if [ -n "${MLA_MORE_SWEEP:-}" ] && [ $SECONDS -lt 530 ]; then
  timeout $((585 - SECONDS)) bash bench/split_sweep.sh "$b/bench/mla_bench" "$OUT/sweep.csv" \
    "$MLA_MORE_SWEEP" 2 4 8 16 32 64
  echo "sweep rc=$? $SECONDS s"
fi
echo "total $SECONDS s"
