#!/usr/bin/env bash
# Forty-eighth session (~500 s): e4m3 scores (MLA_DECODE_FLAG_FP8_MMA, e4m3fn Q and cache) at 16
# and 32 rows in swizzled stages, and at 16 rows the long CTAs (exp_s48_e4m3_swizzled.patch).
# The tree runs them in padded stages, without TMA and without the long-CTA kernel, and on the
# H100 (s48 validation of 0.7.30) they were slower than the same fp8 Q with bf16 scores, whose
# kernels have all three: bs256 kv8192 H16 445.1 against 419.2 us, bs64 kv8192 128.5 / 122.9,
# H16 q2 bs128 kv4096 127.6 / 120.6; faster only at 2-4 tiles a CTA (bs4 kv1024 13.1 / 13.6).
# B: the e4m3 16-row seesaw keeps the f16 seesaw's swizzled stages (TMA from 8 tiles a split),
# 16-row plans of 40+ tiles a split take three solo consumers with e4m3 scores, e4m3 at 32
# rows keeps e4m3fn's swizzled stages (TMA). ptxas: 0 spills at 16 rows (seesaw 32 / 232,
# long 32 / 160), 16 / 28 bytes at 32 rows (as e4m3fn's f16 32 rows).
# Predicted B / A on fp8_e4m3fn_qfp8_mma: ~0.95 from 8 tiles (as the f16 seesaw's swizzle, s47),
# long CTAs ~0.94 (445 -> ~419, the f16 long CTAs' time), 32 rows ~0.95 (s47: 0.940-0.973),
# 1.00-1.02 at 2-4 tiles; fp8_e4m3fn_qfp8 (bf16 scores, kernels unchanged) 1.000, the control
# and the route comparison. Smoke: the long-CTA and 16/32-row suites (e4m3 cases); the suite on B.
set -u
S=bs4/kv1024/h16/q1,bs32/kv1024/h16/q1,bs4/kv8192/h16/q1,bs64/kv1024/h16/q1
S=$S,bs256/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv8192/h16/q1,bs256/kv8192/h16/q1
S=$S,bs1/kv65536/h16/q1,bs32/kv8192/h16/q1/page16,bs128/kv4096/h16/q2,bs32/kv2048/h16/q2
S=$S,bs128/kv4096/h16/q2/page16,bs64/kv4096/h128/q1
E=docs/notes/experiments
MLA_SMOKE='GpuLongCta.*:GpuRows16And32.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma,fp8_e4m3fn_qfp8 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  bash $E/run_patch.sh $E/exp_s48_e4m3_swizzled.patch
