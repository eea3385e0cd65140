#!/usr/bin/env bash
# Prepared in the twenty-eighth session, not run (its device time was spent): the producer's
# page-table look-ahead (exp_paged_ahead.patch: on a paged cache the shuffled loop loads the
# next tile's pages while the current tile is copied; fp8 every row count, bf16 32 rows; no
# spills). Why: 16-token pages cost the 64-row kernel 11 % over a contiguous cache (161.9 against
# 144.8 us, H128 q1 bs64 kv4096), 64-token pages cost the long-CTA kernel 6 % with the shuffled
# loop, and a page-run walk with fewer instructions lost (exp_page_runs.patch: 1.15-1.20x on
# long CTAs): the lookups' latency in front of each tile's copies is the remaining candidate.
# Prediction: paged shapes within ~3 % of contiguous ones; contiguous unchanged (same code).
# Side C: exp_page16_runs_static.patch, the page-run walk again for 16-token pages in long CTAs
# only, its run length a compile-time 4 (was a runtime value whose per-row test likely cost
# the 1.15-1.20x; at 64 rows the static form spilled 8 bytes, so not there). If C wins and B
# does, try both together. C is timed only (run_patch.sh smoke-tests and suite-tests B): it
# needs its own smoke and suite before it is kept.
# Smoke (B's paged tests, forced wgmma), A/B/C on e4m3fn and bf16, then B's suite. ~550 s.
set -u
D=docs/notes/experiments
S='bs256/kv8192/h16/q1/page16,bs256/kv2560/h16/q1/page16,bs64/kv4096/h128/q1/page16,bs128/kv4096/h16/q2/page16,bs32/kv8192/h16/q1/page16,bs32/kv8192/h16/q1/page1,bs4/kv8192/h16/q1/page1,bs64/kv4096/h128/q1,bs32/kv8192/h16/q1'
MLA_SMOKE='AllFormats/GpuPathsFormat.*Pages*:GpuRows64.*:GpuLongCta.*' MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_FORMATS=fp8_e4m3fn,bf16 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=300 timeout 585 bash $D/run_patch.sh $D/exp_paged_ahead.patch \
  $D/exp_page16_runs_static.patch
