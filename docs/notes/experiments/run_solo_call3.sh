#!/usr/bin/env bash
# Twenty-fifth session, third device call: the solo consumers as committed (exp_solo_final.patch
# = 7d6a9d0's kernel change) against the tree before them, then the validation of the new tree.
set -u
P=docs/notes/experiments/exp_solo_final.patch
patch -R -p1 --batch < "$P" > /dev/null || { echo "reverse patch failed"; exit 1; }
S='bs4/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4,bs64/kv4096/h128/q1,bs64/kv4096/h32/q1,bs8/kv16384/h16/q2,bs1/kv65536/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn,bf16 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  timeout 260 bash docs/notes/experiments/run_patch.sh "$P"
patch -p1 --batch < "$P" > /dev/null || { echo "patch failed"; exit 1; }
MLA_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,mxfp4 timeout 300 bash docs/notes/experiments/run_validate.sh
