#!/usr/bin/env bash
# Prepared in the thirty-fifth session, not run (~120 s): why a faster producer costs short CTAs
# (e4m3 scores at 32 rows: own-page rows / 64-token-page runs 1.03-1.06x in 8-tile CTAs, 0.94-0.98x
# in 64-tile ones; not the start's queueing nor PDL: calls 6-7 of docs/perf/h200_2026-12-04_s35).
# ncu (boost clocks) of bs32 kv2048 H16 q2 on 64-token pages with FP8_MMA, the tree (shuffled
# loop) against exp_throttle_32_b.patch (runs): compare the consumers' stall reasons and the
# shared-memory wavefronts of the first tiles (bench/ncu_sass_summary.py's summary per case).
# (Thirty-sixth session: not run; exp_throttle_32_b.patch no longer applies to the tree, whose
# 32-row producer changed in adefa65: re-base it first.)
set -u
OUT=${OUT:-/tmp/out}
for side in tree patch; do
  mkdir -p "$OUT/$side"
  if [ $side = tree ]; then p=""; else p=docs/notes/experiments/exp_throttle_32_b.patch; fi
  OUT=$OUT/$side MLA_NCU_FORMAT=fp8_e4m3fn_qfp8_mma MLA_NCU_OPTS="--clock-control none" \
    MLA_NCU_CASES="bs32/kv2048/h16/q2/page64 bs128/kv4096/h16/q2/page64" \
    timeout 200 bash docs/notes/experiments/ncu_patch.sh $p
  echo "$side rc=$? $SECONDS s"
done
