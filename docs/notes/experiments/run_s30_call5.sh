#!/usr/bin/env bash
# Thirtieth session, last call: the kept Q prologue (4ead9cc) against 0.7.13 (B = the reverse
# patch rev_q_prologue.patch, so B / A > 1 where the change pays) on fp8, bf16 and MXFP4 (bf16
# and MXFP4 at 32 / 64 rows take the producer's wait too: not measured in call 4), then the
# validation of the tree (run_validate.sh: suite, checked mla_bench, FlashMLA beside).
set -u
D=docs/notes/experiments
OUT0=${OUT:-/tmp/out}
S='bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs128/kv4096/h16/q2,bs64/kv4096/h128/q1'
OUT=$OUT0/ab MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn,bf16,mxfp4 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=170 \
  timeout 230 bash $D/run_patch.sh $D/rev_q_prologue.patch
echo "ab rc=$? $SECONDS s"
OUT=$OUT0 MLA_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,bf16 timeout $((575 - SECONDS)) \
  bash $D/run_validate.sh
echo "validate rc=$? $SECONDS s"
