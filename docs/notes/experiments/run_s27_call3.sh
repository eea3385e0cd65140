#!/usr/bin/env bash
# Twenty-seventh session, third device call: the kept change (s27_kept.patch = the 64-row
# consecutive-slot producer and the long-CTA threshold at 40) A/B against the tree without it
# (reversed here: the device's tree is a copy), fp8 e4m3fn and e4m3fn Q + FP8_MMA, the 14
# default cases plus 64-row, paged and 40-56-tile shapes. Timing only (the suite runs in the
# validation call). ~250 s.
set -u
D=docs/notes/experiments
patch -R -p1 --batch < $D/s27_kept.patch > /dev/null || { echo "REVERSE FAILED"; exit 1; }
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2,bs128/kv4096/h16/q4,bs64/kv4096/h128/q1,bs1/kv65536/h16/q1,bs32/kv8192/h128/q1,bs64/kv4096/h128/q2,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16,bs64/kv4096/h64/q1,bs256/kv2560/h16/q1,bs128/kv3072/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=330 \
  timeout 420 bash $D/run_patch.sh $D/s27_kept.patch
