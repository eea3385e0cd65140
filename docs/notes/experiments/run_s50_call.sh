#!/usr/bin/env bash
# Fiftieth session, one device call (~340 s): A = the tree, B = exp_s50_half_exp2.patch (the
# e4m3-score kernels form P by ex2.approx.f16x2 from x rounded to f16: half the MUFU operations
# of the softmax, the row sums from the f16 P). Predicted B / A 0.97-0.99 at 64 rows (the
# seesaw's softmax band, ~1/3 MUFU), 0.99-1.00 at 16 rows; 1.00 if ptxas splits the f16x2
# exponential into two MUFU (the probe after the A/B says). Smoke on B: the e4m3-score tests
# (the fp8-Q rule, measured errors in the log); then B's suite. (The bf16 / MXFP4 split sweep,
# run_s50_sweep.sh, was cut from this call: the device budget left after failed starts.)
MLA_SMOKE='GpuFp8Mma.*:*Fp8Mma*:*fp8_mma*' MLA_SMOKE_TIMEOUT=150 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_ARGS=--mla_extra MLA_AB_TIMEOUT=150 \
  MLA_AB_FILTER='bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs64/kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs128/kv4096/h16/q4/' \
  MLA_AFTER_AB='nvcc -arch=sm_90a -cubin -o /tmp/probe.cubin docs/notes/experiments/ex2_f16x2_probe.cu && cuobjdump -sass /tmp/probe.cubin | grep -E "Function|MUFU|HADD2|F2F"' \
  exec bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_s50_half_exp2.patch
