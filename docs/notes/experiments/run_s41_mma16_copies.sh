#!/usr/bin/env bash
# Prepared in the forty-first session (no device then), not run (~450 s): mma16's tiles staged
# through registers (MLA_MMA16_COPIES=staged, kernels/splitkv/variants.h Mma16Copies), the
# form written for AMD, whose plain loads otherwise leave one tile in LDS and wait for each
# tile's loads before its products (MLA_MMA16_COPIES=single, AMD's default). Run on the H200
# with mma16 forced, so that the AMD pipeline's code is checked against the host reference and
# timed against both other forms:
#   A the tree (auto: cp.async, three tiles in flight);
#   B exp_s41_mma16_copies_staged.patch (the build option's default set to staged);
#   C exp_s41_mma16_copies_single.patch (AMD's current form, one tile waited for before its
#     products; on NVIDIA by cp.async into the one stage, on AMD by plain loads).
# Smoke on B (mma16 forced): every format's heads / query-length cases, the paged paths, MXFP4's
# scale rows of every alignment (all three scale-copy modes) and GpuFp8Mma (e4m3 scores); then
# B's GPU suite in the time left (~150-250 s of its ~600 on the H200; if it is cut short, see
# below), whose .stage1_mma16 registrations run every test on the staged kernels.
# Prediction (H200, mma16 at 16 rows, ~2.4 us a tile): C 1.3-1.6x A (every tile waits a memory
# round trip), B 1.0-1.1x A (the loads overlap the products; stores and 25-45 more registers),
# so B / C ~0.65-0.8: the part of that gain AMD would see is not measurable here. If B is
# correct, make staged AMD's default (kMma16CopiesDefault for MLA_BACKEND_HIP, variants.h;
# the description test and README follow); if B is slower than A on the H200, NVIDIA keeps
# cp.async either way.
# Run from the repository root on the GPU machine under `timeout 570` (its steps and builds come
# close to a call's 600 s); everything lands in $OUT/run_patch.tgz; a failed smoke run stops
# the call before the A/B. Needs CUDA 12.4+ for GpuFp8Mma's mma16 e4m3 cases to mean anything.
# The A/B times fp8_e4m3fn with bf16 Q on 8 shapes only; the staged bf16 and MXFP4 kernels are
# checked, not timed. To run the whole suite on staged kernels in a call of its own: apply
# exp_s41_mma16_copies_staged.patch to the tree (`patch -p1 < ...`), then run_validate.sh.
set -u
S=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1
S=$S,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs128/kv4096/h16/q2
E=docs/notes/experiments
T='AllFormats/GpuFormatHeads.*:AllFormats/GpuPathsFormat.*'
T=$T':Mxfp4/GpuMxfp4Extremes.*:GpuFp8Mma.*'
MLA_SMOKE=$T MLA_SMOKE_STAGE1=mma16 MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' MLA_AB_ENV=MLA_DECODE_STAGE1=mma16 \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 \
  bash $E/run_patch.sh $E/exp_s41_mma16_copies_staged.patch $E/exp_s41_mma16_copies_single.patch
