#!/usr/bin/env bash
# The 16-row seesaw's A/B (fp8 e4m3fn, bf16 Q, 14 shapes: 2 to 32 tiles a CTA, long CTAs, the
# 64-row control, 16- and 64-token pages), with the smoke run of the 16-row paths, long CTAs and
# 64 rows on the first side and its suite after: bash run_swizzle16_ab.sh PATCH [PATCH ...]
# (run_patch.sh's sides B, C, ...). ~380 s for three sides. Used by run_s44_swizzle16_prefetch.sh
# and run_s47_swizzle16_tma8.sh.
set -u
S=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1
S=$S,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs32/kv8192/h16/q1/page64
S=$S,bs4/kv4096/h16/q1,bs16/kv2048/h16/q1,bs64/kv4096/h128/q1,bs256/kv8192/h16/q1
# (16-token pages take no TMA: the copies into the same stages beside TMA's tiles)
S=$S,bs4/kv8192/h16/q1/page16,bs32/kv1024/h16/q1/page16
E=docs/notes/experiments
MLA_SMOKE='GpuRows16And32.*:GpuLong.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=220 \
  bash $E/run_patch.sh "$@"
