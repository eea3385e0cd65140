#!/usr/bin/env bash
# Prepared in the twenty-sixth session, not run: where the long-CTA kernel's threshold belongs.
# A = the tree (64 tiles), B = exp_long_cta_threshold32.patch (32 tiles), fp8 e4m3fn H16 q1 on
# single-split shapes of 32, 40, 48 and 56 tiles a CTA at two batches (256 CTAs: two waves on
# 132 SMs; 128: one), where only B runs three consumers. The twenty-sixth session's points:
# 128 tiles 0.969, 64 tiles 0.980-0.982, 32 tiles (4 splits, 128 CTAs) 1.022, 16 (256 CTAs)
# 0.997. Planner only in effect, so no suite (validate the kept side after). ~120 s.
set -u
D=docs/notes/experiments
S='bs256/kv2048/h16/q1,bs256/kv2560/h16/q1,bs256/kv3072/h16/q1,bs256/kv3584/h16/q1,bs128/kv2048/h16/q1,bs128/kv2560/h16/q1,bs128/kv3072/h16/q1,bs128/kv3584/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 \
  timeout 200 bash $D/run_patch.sh $D/exp_long_cta_threshold32.patch
