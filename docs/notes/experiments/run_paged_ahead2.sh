#!/usr/bin/env bash
# Twenty-ninth session, second call: the page-table look-ahead (B = exp_paged_ahead.patch, its
# smoke and suite passed in the first call: 0.914 on bs4 kv8192 1-token pages, 0.972 on bs256
# kv8192 16-token pages, but 1.015 on the 64-row kernel, H128 16-token pages) against C =
# exp_paged_ahead_no64.patch (the same without the fp8 64-row kernel: a subset of B's code,
# covered by B's tests). 1-token and 16-token pages on e4m3fn and e4m3fn with fp8 Q (FP8_MMA),
# one contiguous control. Then the ncu pair of the 16-row seesaw (run_ncu_seesaw.sh) with the
# time left. Prediction: C keeps B's gains and loses nothing at 64 rows (there, A's code).
set -u
D=docs/notes/experiments
S='bs4/kv8192/h16/q1/page1,bs32/kv8192/h16/q1/page1,bs64/kv1024/h16/q1/page1,bs1/kv65536/h16/q1/page1,bs256/kv8192/h16/q1/page1,bs256/kv8192/h16/q1/page16,bs128/kv4096/h16/q2/page1,bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page16,bs4/kv8192/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=380 \
  timeout 440 bash $D/run_patch.sh $D/exp_paged_ahead.patch $D/exp_paged_ahead_no64.patch
echo "ab done $SECONDS s"
[ $SECONDS -lt 470 ] && timeout $((585 - SECONDS)) bash $D/run_ncu_seesaw.sh
echo "total $SECONDS s"
