#!/usr/bin/env bash
# Prepared in the twenty-ninth session, not run. bf16 at 16 rows is the one shuffled-loop
# kernel left without 0.7.13's page-table look-ahead: with it ptxas spills 4 bytes (8-byte stack
# frame; where in the kernel was not seen: no cuobjdump on the CPU machine). Its paged cost:
# bf16 bs32 kv8192 H16 page1 103.8 us against 96.6 contiguous (validation run of 0.7.13).
# B = exp_paged_ahead_bf16_16.patch. Prediction: 1-token pages ~0.93x (fp8's 16-row gains were
# 0.87-0.92x; bf16 reads twice the bytes a token per page lookup, so less) unless the spill sits
# in the row loop. Smoke (paged tests, forced wgmma), A/B on bf16, B's suite. ~320 s.
set -u
D=docs/notes/experiments
S='bs4/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page1,bs64/kv1024/h16/q1/page1,bs256/kv8192/h16/q1/page1,bs256/kv8192/h16/q1/page16,bs32/kv8192/h16/q1'
MLA_SMOKE='AllFormats/GpuPathsFormat.*Pages*' MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_FORMATS=bf16 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=120 timeout 420 bash $D/run_patch.sh $D/exp_paged_ahead_bf16_16.patch
