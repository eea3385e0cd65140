#!/usr/bin/env bash
# Prepared in the thirty-sixth session, not run (~90 s): the round of 0.7.19's 64-row kernels as
# a timeline (exp_timeline_s36.patch, ported from the tenth session's by a helper: stamps of
# the consumers' waits, score chain, softmax, P^T hand-over and value tiles, the producer's
# tiles; compiles without spills; its output format as timeline_parse.py reads). FP8_MMA (K
# from shared memory) and bf16 Q (K as register fragments) on H128 q1 bs64 kv4096, FP8_MMA on
# H16 q4: where the ~3,000 idle tensor cycles of a round go (notes "0-s36" (a)).
set -u
OUT=${OUT:-/tmp/out}
E=docs/notes/experiments
OUT=$OUT/mma MLA_TL_FORMAT=fp8_e4m3fn_qfp8_mma timeout 200 bash $E/run_timeline.sh \
  bs64/kv4096/h128/q1 bs128/kv4096/h16/q4
echo "mma rc=$? $SECONDS s"
OUT=$OUT/bf16q MLA_TL_FORMAT=fp8_e4m3fn timeout 200 bash $E/run_timeline.sh bs64/kv4096/h128/q1
echo "bf16q rc=$? $SECONDS s"
