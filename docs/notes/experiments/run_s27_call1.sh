#!/usr/bin/env bash
# Twenty-seventh session, first device call: (1) Nsight Compute of the long-CTA kernel (fp8
# e4m3fn, bs256 kv8192 H16: 128 tiles a CTA, three solo consumers) and of the 32-row solo kernel
# (bs128 kv4096 H16 q2), to say what holds each (item (a) of "After 0.7.10"); (2) the prepared
# long-CTA threshold A/B (run_long_cta_threshold.sh, item (b)). ~250 s.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=docs/notes/experiments
MLA_NCU_CASES='bs256/kv8192/h16/q1 bs128/kv4096/h16/q2' timeout 200 bash $D/ncu_patch.sh \
  > "$OUT/ncu.log" 2>&1
echo "ncu rc=$? $SECONDS s"; cat "$OUT/ncu.log" | head -120
timeout 220 bash $D/run_long_cta_threshold.sh > "$OUT/threshold.log" 2>&1
echo "threshold rc=$? $SECONDS s"; tail -30 "$OUT/threshold.log"
