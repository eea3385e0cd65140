#!/usr/bin/env bash
# Thirty-sixth session, call 10 (~60 s): ncu (boost clocks) of 0.7.19's FP8_MMA 64-row kernel
# (K from shared memory, 128-byte swizzle) on bs64 kv4096 H128 q1: where its time goes now, for
# the next step (call 2 holds the register form's and the unswizzled form's profiles).
set -u
OUT=${OUT:-/tmp/out}
MLA_NCU_FORMAT=fp8_e4m3fn_qfp8_mma MLA_NCU_OPTS="--clock-control none" \
  MLA_NCU_CASES="bs64/kv4096/h128/q1" timeout 200 bash docs/notes/experiments/ncu_patch.sh
