#!/usr/bin/env bash
# Prepared in the twenty-ninth session, not run. 0.7.13's look-ahead loads tile t + 1's pages
# before tile t's copies ("early"); it lost on the fp8 64-row kernel (1.011-1.017x, 16-token
# pages), whose producer has 24 registers: the page lives across the whole copy loop.
# B = exp_paged_ahead_late.patch: the load after tile t's copies and arrive (its latency behind
# the wait on a free stage), and for the 64-row kernel too; no spills (bf16 at 16 rows still
# spills 4 bytes either way: not included). Prediction: 64 rows 16-token pages 0.98-1.00x
# (from 161.8 us), 1-token pages ~0.99; 16 / 32 rows within 1 % of early (if the ring is full
# the producer waits on a free stage anyway). Smoke, A/B on e4m3fn, B's suite. ~330 s.
set -u
D=docs/notes/experiments
S='bs4/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page1,bs256/kv8192/h16/q1/page1,bs256/kv8192/h16/q1/page16,bs128/kv4096/h16/q2/page1,bs64/kv4096/h128/q1/page16,bs64/kv4096/h128/q1/page1,bs128/kv4096/h16/q4/page16'
MLA_SMOKE='AllFormats/GpuPathsFormat.*Pages*:GpuRows64.*:GpuLongCta.*' MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=130 timeout 440 bash $D/run_patch.sh $D/exp_paged_ahead_late.patch
