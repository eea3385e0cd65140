#!/usr/bin/env bash
# Twenty-sixth session, second device call: the long-CTA kernel as committed
# (exp_long_cta_final.patch) against the tree before it, on fp8 at 16 rows (long and short
# CTAs), then the validation of the new tree (suite with the .one_split registration, checked
# mla_bench over four formats, FlashMLA beside it). Carry build-peers.
set -u
P=docs/notes/experiments/exp_long_cta_final.patch
patch -R -p1 --batch < "$P" > /dev/null || { echo "reverse patch failed"; exit 1; }
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q1,bs64/kv16384/h16/q1,bs16/kv32768/h16/q1,bs1/kv65536/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 \
  timeout 200 bash docs/notes/experiments/run_patch.sh "$P"
patch -p1 --batch < "$P" > /dev/null || { echo "patch failed"; exit 1; }
MLA_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,mxfp4,bf16 timeout 370 \
  bash docs/notes/experiments/run_validate.sh
