#!/usr/bin/env bash
# Fifty-first session, one device call (~450 s): A = the tree, B = exp_s51_exp2_fma.patch (every
# other exponential of write_pt, P = 2^x of the scores, on the FMA pipe: a degree-4 polynomial,
# ten instructions instead of one MUFU.EX2; all wgmma kernels but staged MXFP4), C =
# exp_s51_exp2_fma4.patch (every fourth). Predicted B / A 0.97-1.00 at 64 rows (the seesaw's
# softmax band, ~1/3 MUFU), ~1.00 at 16 rows; worse than C if issue, not MUFU, sets the band.
# Smoke on B: the e4m3-score tests, 64-row tests, NaN rows; then the MUFU count of A's and B's
# machine code; then B's suite with the time left.
MLA_SMOKE='GpuFp8Mma.*:GpuRows64.*:*ScaleCode255*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_ARGS=--mla_extra MLA_AB_TIMEOUT=240 \
  MLA_AB_FILTER='bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs128/kv4096/h16/q4/' \
  MLA_AFTER_AB='for s in A B; do d=MLA_BUILD_$s; f=$(ls ${!d}/src/libmla_decode.so* | head -1); echo "$s: $(cuobjdump -sass $f | grep -c "MUFU.EX2") MUFU.EX2, $(cuobjdump -sass $f | grep -c "FMNMX.NAN") FMNMX.NAN"; done' \
  exec bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_s51_exp2_fma.patch \
  docs/notes/experiments/exp_s51_exp2_fma4.patch
