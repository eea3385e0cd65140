#!/usr/bin/env bash
# Fiftieth session (~200 s): A = the tree, B = exp_s50_score_wg4.patch = exp_s49_score_wg3 with
# the value warpgroups' one fragment set used in two halves (ax: even m-blocks, ay: odd), each
# built while the other half's products run (v3's value warpgroups waited for every k-step's
# products before building the next fragments: ncu of v3 had 31 % of samples at those waits).
# Predicted B / A 0.92-0.97 on H128 with FP8_MMA if the value warpgroups set v3's tile, ~1.0 if
# the score warpgroup then does; 16-row controls 1.00. No suite (run if it gains).
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*:*Fp8Mma*:*fp8_mma*' MLA_SMOKE_TIMEOUT=180 MLA_NO_SUITE=1 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_ARGS=--mla_extra MLA_AB_TIMEOUT=240 \
  MLA_AB_FILTER='bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs128/kv4096/h16/q4/|bs8/kv32768/h128/q1/|bs64/kv8192/h16/q1/' \
  exec bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_s50_score_wg4.patch
