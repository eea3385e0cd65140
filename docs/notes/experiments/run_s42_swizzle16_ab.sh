#!/usr/bin/env bash
# Forty-second session, a short form of run_s40_swizzle16.sh for a call of ~250 s: the 16-row
# seesaw in swizzled stages (exp_s39_swizzle16.patch) against the tree, smoke of its 16-row
# paths then the A/B only (no owner_rn side, no suite). Run under `timeout 240`.
set -u
S=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1
S=$S,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1
S=$S,bs32/kv8192/h16/q1/page16,bs32/kv8192/h16/q1/page64,bs128/kv4096/h16/q2
E=docs/notes/experiments
MLA_NO_SUITE=1 MLA_SMOKE='GpuRows16And32.*:GpuLong.*' MLA_SMOKE_TIMEOUT=60 \
  MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=140 \
  bash $E/run_patch.sh $E/exp_s39_swizzle16.patch
