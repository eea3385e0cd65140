#!/usr/bin/env bash
# Thirty-second session, call 6 (~200 s). The validation (call 5) timed bs256 kv8192 H16 at
# 325.8-326.0 us where 0.7.14's ran 318.1-319.7: B = rev_to_0714_kernels.patch (every kernel file
# as at fc4d6c5) against the tree on the 16-row fp8 shapes, bf16 Q, no suite. Prediction: 1.00 +-
# 0.01 (the 16-row kernels' code changed only in write_q's fp8-Q branch), i.e. machine noise.
set -u
D=docs/notes/experiments
S=bs256/kv8192/h16/q1,bs64/kv8192/h16/q1,bs32/kv8192/h16/q1,bs4/kv8192/h16/q1,bs256/kv1024/h16/q1
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=150 \
  timeout 300 bash $D/run_patch.sh $D/rev_to_0714_kernels.patch
