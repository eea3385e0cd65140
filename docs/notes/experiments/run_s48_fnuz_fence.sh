#!/usr/bin/env bash
# Prepared in the forty-seventh session, not run (~400 s). e4m3fnuz's wgmma kernels (16 rows,
# long CTAs, 32 and 64 rows) decode V by bit operations; LLVM sank that decode past
# wgmma.fence and ptxas injected a warpgroup.arrive before three of each k-step's value
# products (C7519, every e4m3fnuz kernel, none elsewhere).
#   B exp_s47_fnuz_fence.patch: register fences on the V^T fragments before wgmma.fence
#     (value_products). ptxas: no C7519 left, spills unchanged; every other kernel's sm_90a
#     .text byte-identical to the tree's (e4m3fn, bf16, FP8_MMA, MXFP4; checked in s47).
#   C exp_s47_fnuz_fence_swizzle32.patch: B plus e4m3fnuz's 32 rows in swizzled stages (32 /
#     232 registers: s47's side, which took 1.04-1.11x the padded stages' time before the fence).
#   Prediction: B / A 0.95-1.00 on e4m3fnuz (the arrives wait on the k-step's products in
#   flight), 1.000 on the e4m3fn control; C / B unknown (if the arrives were what the swizzled
#   32 rows lost, ~0.95 as e4m3fn's).
# Smoke (16/32/64-row paths, long CTAs, forced to wgmma) and the suite on B.
set -u
S=bs4/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs256/kv8192/h16/q1
S=$S,bs128/kv4096/h16/q2,bs128/kv4096/h16/q2/page16,bs32/kv2048/h16/q2,bs64/kv4096/h128/q1
S=$S,bs128/kv4096/h16/q4
E=docs/notes/experiments
MLA_SMOKE='GpuRows16And32.*:GpuLong.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fnuz,fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=220 \
  bash $E/run_patch.sh $E/exp_s47_fnuz_fence.patch $E/exp_s47_fnuz_fence_swizzle32.patch
