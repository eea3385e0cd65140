#!/usr/bin/env bash
# Thirtieth session, last call (~200 s). B = exp_paged_ahead_late64.patch: the page-table
# look-ahead for the fp8 64-row kernel too, loaded late (after a tile's copies); the 16 / 32-row
# kernels' PTX is the tree's, the 64-row kernels' PTX is exp_paged_ahead_late.patch's on this
# tree (checked on the CPU machine), whose 64-row A/B in call 3 was 0.970 (1-token pages) /
# 0.998 (16-token). Smoke: every test_gpu_paths case that reaches 64 rows or pages, forced
# wgmma (the late form ran the whole suite in call 3 on 0.7.13's Q prologue). A/B on e4m3fn and
# fp8 Q with e4m3 scores. Prediction: 0.97 / 1.00 as in call 3, contiguous 1.00.
set -u
D=docs/notes/experiments
S='bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page16,bs128/kv4096/h16/q4/page1,bs64/kv4096/h128/q1'
MLA_SMOKE='GpuRows64.*:AllFormats/GpuFormatHeads.*h128*:Fp8Q/GpuFp8Query.*:*Pages*' \
  MLA_SMOKE_TIMEOUT=100 MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=100 \
  timeout 280 bash $D/run_patch.sh $D/exp_paged_ahead_late64.patch
