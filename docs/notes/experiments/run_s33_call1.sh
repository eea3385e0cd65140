#!/usr/bin/env bash
# Thirty-third session, call 1 (~300 s). The cold review of 0.7.15 found d6d8eb3 (mma16: fp8 Q
# codes widened after every load) raised ptxas's register count of mma16's other kernels (bf16
# 188 -> 255, MXFP4 210 / 212 -> 255, fp8 with bf16 rope 219 -> 254; no spills). B =
# exp_mma16_q_widen_in_loop.patch (the widening back inside the load loop: the old counts),
# forced to mma16, bf16 Q on bf16 / MXFP4 / fp8+bf16-rope caches and fp8 Q (the control: B
# should cost it ~1.05-1.10x). Prediction: bf16 Q 1.00 +- 0.01 (one 256-thread CTA an SM
# either way). No suite (B is the old form; A's suite ran green in session 32).
set -u
D=docs/notes/experiments
S=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1
S=$S,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2
MLA_NO_SUITE=1 MLA_AB_FORMATS=bf16,mxfp4,fp8_e4m3fn_bf16_rope,fp8_e4m3fn_qfp8 MLA_AB_FILTER='.' \
  MLA_AB_ENV=MLA_DECODE_STAGE1=mma16 \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=330 \
  timeout 420 bash $D/run_patch.sh $D/exp_mma16_q_widen_in_loop.patch
