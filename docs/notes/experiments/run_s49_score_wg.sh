#!/usr/bin/env bash
# Forty-ninth session (~500 s): A = the tree (0.7.31), B = exp_s49_score_wg.patch (e4m3 scores
# at 64 rows: one score warpgroup takes every tile's S^T, softmax step and P^T into a 3-deep
# ring, two value warpgroups add the tiles to their halves of O^T; the seesaw's two consumers
# took their softmax at once, the tensor pipe idle meanwhile). B's GpuFp8Mma and GpuRows64
# first (a never-run kernel), then the A/B with FP8_MMA on the 64-row shapes and two 16-row
# controls (unchanged code), then B's suite.
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_ARGS=--mla_extra MLA_AB_TIMEOUT=200 \
  MLA_AB_FILTER='bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs128/kv4096/h16/q4/|bs64/kv8192/h16/q1/|bs4/kv1024/h16/q1/' \
  exec bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_s49_score_wg.patch
