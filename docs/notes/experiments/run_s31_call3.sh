#!/usr/bin/env bash
# Thirty-first session (~300 s). exp_q_codes_mma16.patch: the mma16 kernel (AMD's path, and
# batch-invariant mode's on every GPU) loads fp8 Q as codes for every (head, chunk) first and
# widens them after (as write_q of the wgmma kernels since 0.7.15: 0.80-0.94x there); the wgmma
# kernels' PTX only gains a negated predicate. A/B with mma16 forced (MLA_DECODE_STAGE1 for the
# A/B only), fp8 Q and bf16 Q; smoke of mma16's fp8-Q cases; the whole suite on the patch.
# Prediction: fp8 Q 0.95-1.00x (mma16's Q is one chunk set a lane, its loads were already
# issued close together), bf16 Q 1.00.
set -u
D=docs/notes/experiments
S='bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs128/kv4096/h16/q2,bs64/kv4096/h128/q1'
MLA_SMOKE='Fp8Q/GpuFp8Query.*' MLA_SMOKE_STAGE1=mma16 MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_ENV=MLA_DECODE_STAGE1=mma16 MLA_AB_FORMATS=fp8_e4m3fn_qfp8,fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 \
  timeout 570 bash $D/run_patch.sh $D/exp_q_codes_mma16.patch
