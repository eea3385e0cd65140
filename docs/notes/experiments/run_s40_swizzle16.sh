#!/usr/bin/env bash
# Prepared in the thirty-ninth session (no device then), not run (~450 s): the 16-row fp8
# seesaw (bf16 scores; the competition shapes but bs256 kv8192) in swizzled stages, so that
# whole tiles of a contiguous cache or of pages of a multiple of 64 tokens come by TMA as in
# the 64-row kernels and the long CTAs (0.7.21).
#   B exp_s39_swizzle16.patch: splitkv::wgmma_swizzled_stages (variants.h) also takes 16 rows
#     with bf16 scores; the seesaw's producer 32 registers, consumers 232 (ptxas: 0 spills;
#     with 24 / 240 the producer spilled 4 bytes); 5 stages as before (36,864-byte stages
#     instead of 37,888). Tests: fp8 16-row cases in GpuRows16And32.OwnPagesAndRuns (contiguous,
#     pages of 1, 3, 16, 64, 128) with the TMA assertion, GpuRows16And32.* under .notma, a
#     16-row plan in PlanCreate.TmaSwitchReachesSwizzledPlans. Reviewed cold (helper, s39).
#   Prediction: 0.95-0.98 where CTAs take many tiles (bs64 kv8192, bs32 kv8192, bs4 kv8192),
#     unknown at 1-4 tiles a CTA (bs4 / bs32 / bs64 / bs256 kv1024): the s27 consecutive loop,
#     a faster producer, cost the seesaw's short CTAs 1.01-1.13 there (never explained).
#   If short CTAs lose: take TMA only from a tile count (Params::tiles_per_split, host side in
#     launch_rows) and keep the swizzled copies below it, or keep the padded layout there.
#   C exp_s39_owner_rn.patch: owner_step's tm * coefficient and tm - m_prev as mul.rn / sub.rn
#     (s37's review: plain mul.f32 / sub.f32 may be contracted by ptxas into an fma, rounding
#     otherwise than the solo consumers' vote, exceeds_lazy_bound). Every wgmma kernel's PTX
#     changes; predicted 1.00 (two instructions a row and tile, owners only). A/B only: it
#     lands if it costs nothing, and the validation call's suite then runs it.
# Smoke (16-row paths) and the suite on B.
set -u
S=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1
S=$S,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1
S=$S,bs32/kv8192/h16/q1/page16,bs32/kv8192/h16/q1/page64,bs128/kv4096/h16/q2,bs256/kv8192/h16/q1
E=docs/notes/experiments
MLA_SMOKE='GpuRows16And32.*:AllFormats/GpuPathsFormat.*fp8*:GpuLong.*:GpuLongCta.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  bash $E/run_patch.sh $E/exp_s39_swizzle16.patch $E/exp_s39_owner_rn.patch
