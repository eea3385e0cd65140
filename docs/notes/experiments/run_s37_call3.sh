#!/usr/bin/env bash
# Thirty-seventh session, call 3 (~200 s): consumer 1 of the seesaw starts its score chain
# later, so that it runs under consumer 0's softmax (call 2: taking away consumer 1's wait for
# consumer 0's maxima made the 64-row FP8_MMA kernel 5.8 % slower). B = it waits for consumer
# 0's maxima (m_full) before its chain (exp_s37_stagger), C = for consumer 0's score chain to
# complete (a named barrier; exp_s37_stagger_sdone). Every seesaw kernel (16 and 64 rows).
set -u
S=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4,bs64/kv4096/h128/q2,bs32/kv1024/h16/q1
S=$S,bs64/kv1024/h16/q1,bs4/kv8192/h16/q1
E=docs/notes/experiments
MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma,fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=300 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_s37_stagger.patch $E/exp_s37_stagger_sdone.patch
