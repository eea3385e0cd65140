#!/usr/bin/env bash
# Forty-seventh session, call 3 (~430 s): 32 rows of fp8 with bf16 scores in swizzled stages,
# on top of 0.7.29's swizzled 16-row seesaw (exp_s47_swizzle32.patch: s39's 32-row part,
# rebased; ptxas: e4m3fn's producer 24 registers, 16 / 28 bytes of spill as in s39, e4m3fnuz
# 32 / 232 none). Whole tiles by TMA at every 32-row CTA length on contiguous caches and
# 64-token pages; the own-page rows (pages of 1-8) and runs (16) go to copy_tile_rows_ss.
#   Prediction: 0.95-0.98 on contiguous caches and 64-token pages at 64 tiles a CTA (bs128
#   kv4096 H16 q2: the 16-row seesaw's 0.95-0.97 from 8 tiles); ~1.00-1.03 at 8 tiles (bs32
#   kv2048 q2: short CTAs lost at 16 rows); 1- and 16-token pages unknown (s35's own-page rows
#   and runs had taken them 113 -> 110 us).
# Smoke (16/32-row paths, long CTAs) and the suite on B.
set -u
S=bs128/kv4096/h16/q2,bs128/kv4096/h16/q2/page1,bs128/kv4096/h16/q2/page16
S=$S,bs128/kv4096/h16/q2/page64,bs32/kv2048/h16/q2,bs64/kv4096/h32/q1,bs4/kv16384/h16/q2
S=$S,bs32/kv8192/h16/q1,bs2/kv16384/h16/q2
E=docs/notes/experiments
MLA_SMOKE='GpuRows16And32.*:GpuLong.*' MLA_SMOKE_TIMEOUT=90 \
  MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fnuz MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=130 \
  bash $E/run_patch.sh $E/exp_s47_swizzle32.patch
