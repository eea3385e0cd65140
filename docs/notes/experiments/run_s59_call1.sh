#!/usr/bin/env bash
# Fifty-ninth session, one call for queue items 0-s58 (3), (4) and, on an H200, (1):
#   1. the 64-row epilogue's timeline (exp_s58_cta_timeline_epi.patch, ~40 s);
#   2. the early tensor-map prefetch (exp_s58_early_maps.patch) against the tree, A / B / B in
#      turn, two rounds, on short and long CTAs (run_s58_tile0.sh, ~150 s; B's suite if it wins);
#   3. on an H200 only: the validation (run_validate.sh without the suite, off-grid shapes,
#      four formats) in the time left; carry ["build-peers"].
#   bash docs/notes/experiments/run_s59_call1.sh
set -u
cd "$(dirname "$0")/../../.." || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
X=docs/notes/experiments
MLA_TL_PATCH=$X/exp_s58_cta_timeline_epi.patch timeout 90 bash $X/run_s56_cta_timeline.sh \
  fp8_e4m3fn:bs64/kv4096/h128/q1 fp8_e4m3fn:bs128/kv4096/h16/q4 fp8_e4m3fn:bs40/kv3000/h128/q1
echo "== timeline done $SECONDS s"
MLA_B1_PATCH=$X/exp_s58_early_maps.patch MLA_B2_PATCH=$X/exp_s58_early_maps.patch \
  MLA_SHAPES=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,\
bs1/kv65536/h16/q1,bs64/kv4096/h128/q1 timeout 420 bash $X/run_s58_tile0.sh
echo "== early maps done $SECONDS s"
case "$gpu" in
  *H200*)
    left=$((585 - SECONDS))
    if [ $left -gt 150 ]; then
      MLA_VALIDATE_SUITE=0 MLA_VALIDATE_OFFGRID=1 \
        MLA_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,mxfp4,bf16 MLA_END=$((left - 15)) \
        timeout $left bash $X/run_validate.sh
    else
      echo "validation: $left s left, not started"
    fi ;;
  *) echo "validation skipped: not an H200" ;;
esac
echo "total $SECONDS s"
