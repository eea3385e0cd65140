#!/usr/bin/env bash
# Prepared in the forty-ninth session (~400 s): A = the tree, B = exp_s49_score_wg3.patch, C =
# exp_s49_score_wg2.patch. Both give the 64-row kernel with e4m3 scores (FP8_MMA) a score
# warpgroup (every tile's S^T, softmax step and P^T, into a 3-deep ring) and two value
# warpgroups (O^T halves), the next tile's score chain issued before a tile's softmax (v1,
# without that overlap, ran at 1.01-1.04x on H128: run_s49_score_wg.sh); B also skips the
# owners' step on settled tiles (the vote of the 32-row kernels). Predicted B / A 0.75-0.85 on
# H128 q1 and q2 and H16 q4 with FP8_MMA, C between B and 1.0; 16-row controls 1.00.
# B's tests that reach the kernel first (a never-run kernel: stop if they fail or hang), then
# the A/B/C, then B's suite.
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*:*Fp8Mma*:*fp8_mma*' MLA_SMOKE_TIMEOUT=180 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_ARGS=--mla_extra MLA_AB_TIMEOUT=240 \
  MLA_AB_FILTER='bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs128/kv4096/h16/q4/|bs8/kv32768/h128/q1/|bs64/kv8192/h16/q1/|bs4/kv1024/h16/q1/' \
  exec bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_s49_score_wg3.patch \
  docs/notes/experiments/exp_s49_score_wg2.patch
