#!/usr/bin/env bash
# Twenty-eighth session, fourth device call: the producer's page-run walk for pages of 4-32
# tokens (exp_page_runs.patch: fp8 64-row and long-CTA kernels; the shuffled loop's per-lane
# page-table lookups made 16-token pages ~11 % slower than a contiguous cache at 64 rows).
# Smoke (paged tests, forced wgmma), A/B on e4m3fn with 16- and 32-token pages and controls,
# then B's GPU suite (split cache form on 16-token pages included) with the time left. ~400 s.
set -u
D=docs/notes/experiments
S='bs256/kv8192/h16/q1/page16,bs256/kv2560/h16/q1/page16,bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page32,bs128/kv4096/h16/q4/page16,bs32/kv8192/h16/q1/page16,bs64/kv4096/h128/q1,bs256/kv8192/h16/q1/page64'
MLA_SMOKE='AllFormats/GpuPathsFormat.*Pages*:GpuRows64.*:GpuLongCta.*' MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=130 timeout 585 bash $D/run_patch.sh $D/exp_page_runs.patch
