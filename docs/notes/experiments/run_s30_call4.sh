#!/usr/bin/env bash
# Thirtieth session. ncu (call 1) showed the consumers' Q prologue waiting on one global round
# trip per row of a warp (2 rows at 16 rows, 8 at 64: a 64-row CTA's consumers spend ~7 % of
# their samples there), and the 16-row seesaw's wait there doubling when the producer's first
# tiles leave faster (exp_consecutive_16rows.patch: 104 -> 242 samples at free clocks).
# B = exp_q_loads_at_once.patch: every row of a warp loaded before the first is written.
# C = exp_q_loads_first.patch: B, and the producer starts copying once every consumer warp has
# issued its Q loads (bar.arrive / bar.sync 6). Prediction: B H128 q1 bs64 kv4096 ~0.94x, H16 q4
# ~0.95x, the 16-row seesaw 0.97-0.99x, long CTAs ~1.00; C another 1-2 % on short CTAs.
set -u
D=docs/notes/experiments
S='bs4/kv8192/h16/q1,bs4/kv1024/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4,bs64/kv4096/h128/q1,bs1/kv65536/h16/q1'
MLA_SMOKE='AllFormats/GpuFormatHeads.*:GpuRows64.*:GpuLongCta.*:Fp8Q/GpuFp8Query.*' MLA_SMOKE_TIMEOUT=80 \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=200 timeout 580 bash $D/run_patch.sh $D/exp_q_loads_at_once.patch \
  $D/exp_q_loads_first.patch
