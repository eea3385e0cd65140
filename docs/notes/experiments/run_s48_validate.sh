#!/usr/bin/env bash
# Forty-eighth session, call 1 (~560 s, carry build-peers): run_validate.sh on 0.7.30 (e4m3fn's
# 32-row kernel in swizzled stages; its first run as one build: s47 measured it only as an A/B
# side), then on its build while time is left:
#   1. compute-sanitizer memcheck + synccheck over the 16/32-row suites and long CTAs;
#   2. checked mla_bench of e4m3fnuz, MXFP4 and bf16 on the competition shapes and H16 q2;
#   3. split sweep (2..64) of the 32-row e4m3fn shapes (H16 q2): do swizzled 32 rows prefer
#      another split count than the planner's?
set -u
OUT=${OUT:-/tmp/out}; E=docs/notes/experiments
timeout 400 bash $E/run_validate.sh
b=$(ls -d /tmp/validate_build.* | head -1)
[ -x "$b/tests/test_gpu_paths" ] || { echo "no build"; exit 1; }
if [ $SECONDS -lt 460 ]; then
  MLA_SANITIZE_TIMEOUT=$(( (530 - SECONDS) / 3 )) bash $E/run_sanitize.sh "$b" \
    'GpuRows16And32.*:GpuLongCta.*' memcheck synccheck
  echo "sanitize $SECONDS s"
fi
C='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q2/'
if [ $SECONDS -lt 500 ]; then
  timeout $((555 - SECONDS)) "$b/bench/mla_bench" --mla_formats=fp8_e4m3fnuz,mxfp4,bf16 \
    --mla_iters=20 "--benchmark_filter=$C" "--mla_csv=$OUT/other_formats_checked.csv" \
    > "$OUT/other_formats_checked.log" 2>&1
  echo "fnuz/mxfp4/bf16 checked rc=$? $SECONDS s"
  grep -E '^\|' "$OUT/other_formats_checked.log" | cut -d'|' -f2,3,4,9,10,12,14 | head -30
fi
if [ $SECONDS -lt 530 ]; then
  timeout $((585 - SECONDS)) bash bench/split_sweep.sh "$b/bench/mla_bench" "$OUT/sweep.csv" \
    'fp8_e4m3fn/bs(32|128)/kv(2048|4096)/h16/q2/' 2 4 8 16 32 64
  echo "sweep rc=$? $SECONDS s"
fi
echo "total $SECONDS s"
