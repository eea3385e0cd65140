#!/usr/bin/env bash
# Forty-seventh session, call 2 (~560 s, carry build-peers): run_validate.sh on 0.7.29 (the
# 16-row seesaw in swizzled stages, TMA from 8 tiles a CTA; 0.7.28's staged AMD copies and
# tensor-map prefetch had not run as one build), then on its build while time is left:
#   1. compute-sanitizer memcheck + synccheck over the 16-row suites (the seesaw's new stages);
#   2. checked mla_bench of MXFP4 and bf16 on the competition shapes;
#   3. split sweep (2..64) of the short 16-row shapes, where swizzled stages lost 1-3 % at 2-4
#      tiles a CTA (s47 A/B): do they now prefer longer CTAs (fewer splits)?
set -u
OUT=${OUT:-/tmp/out}; E=docs/notes/experiments
timeout 400 bash $E/run_validate.sh
b=$(ls -d /tmp/validate_build.* | head -1)
[ -x "$b/tests/test_gpu_paths" ] || { echo "no build"; exit 1; }
if [ $SECONDS -lt 470 ]; then
  MLA_SANITIZE_TIMEOUT=$(( (540 - SECONDS) / 3 )) bash $E/run_sanitize.sh "$b" \
    'GpuRows16And32.*:GpuLongCta.*' memcheck synccheck
  echo "sanitize $SECONDS s"
fi
C='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it'
if [ $SECONDS -lt 500 ]; then
  timeout $((560 - SECONDS)) "$b/bench/mla_bench" --mla_formats=mxfp4,bf16 --mla_iters=20 \
    "--benchmark_filter=$C" "--mla_csv=$OUT/mxfp4_bf16_checked.csv" > "$OUT/mxfp4_bf16_checked.log" 2>&1
  echo "mxfp4/bf16 checked rc=$? $SECONDS s"
  grep -E '^\|' "$OUT/mxfp4_bf16_checked.log" | cut -d'|' -f2,3,4,9,10,12,14 | head -24
fi
if [ $SECONDS -lt 530 ]; then
  timeout $((585 - SECONDS)) bash bench/split_sweep.sh "$b/bench/mla_bench" "$OUT/sweep.csv" \
    'fp8_e4m3fn/bs(4|32)/kv(1024|4096|8192)/h16/q1/|fp8_e4m3fn/bs16/kv2048/h16/q1/' 2 4 8 16 32 64
  echo "sweep rc=$? $SECONDS s"
fi
echo "total $SECONDS s"
