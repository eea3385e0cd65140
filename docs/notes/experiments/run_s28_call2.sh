#!/usr/bin/env bash
# Twenty-eighth session, second device call: the consecutive-slot producer loop for MXFP4 rows
# (exp_mxfp4_consecutive.patch: C) and, on top, for the 16-row long-CTA kernel
# (exp_mxfp4_long_cta_consecutive.patch: B, smoke-tested and suite-tested). fp8 e4m3fn and MXFP4
# on the competition shapes, single splits of 40-128 tiles (long CTAs), 64-token pages, H16 q2
# and H128 controls. ~450 s.
set -u
D=docs/notes/experiments
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs256/kv2560/h16/q1,bs256/kv4096/h16/q1,bs256/kv6144/h16/q1,bs128/kv4096/h16/q2,bs64/kv4096/h128/q1,bs32/kv8192/h16/q1/page64,bs256/kv8192/h16/q1/page64,bs1/kv65536/h16/q1'
MLA_SMOKE='AllFormats/GpuPathsFormat.*mxfp4*:AllFormats/GpuFormatHeads.*mxfp4*:Mxfp4/GpuMxfp4Extremes.*:GpuLongCta.*:GpuRows64.*:AllFormats/GpuPathsFormat.*fp8_e4m3fn*' \
  MLA_SMOKE_TIMEOUT=100 MLA_AB_FORMATS=fp8_e4m3fn,mxfp4 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=280 \
  timeout 580 bash $D/run_patch.sh $D/exp_mxfp4_long_cta_consecutive.patch \
  $D/exp_mxfp4_consecutive.patch
