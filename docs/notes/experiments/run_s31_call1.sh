#!/usr/bin/env bash
# Prepared in the thirtieth session, not run (~450 s). (1) The whole GPU suite, a checked
# mla_bench and FlashMLA beside on the final tree of 0.7.14 (its last kernel commit, the late
# look-ahead at 64 rows, ran a 39-test smoke only). (2) exp_consecutive_16rows.patch again on
# top of 0.7.14's Q prologue: it lost 1.01-1.13x because Q's loads queued behind its faster first
# copies; with one Q round trip a warp that cost may be smaller than the producer's gain.
# Prediction: 16-row seesaw 0.98-1.02x (no longer 1.06-1.11 at bs4 kv8192 / bs32 kv1024).
set -u
D=docs/notes/experiments
OUT0=${OUT:-/tmp/out}
OUT=$OUT0 MLA_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,bf16 \
  MLA_BENCH_FILTER='page|bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q1/|bs1/kv65536/h16/q1/' \
  timeout 300 bash $D/run_validate.sh
echo "validate rc=$? $SECONDS s"
S='bs4/kv8192/h16/q1,bs4/kv1024/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs32/kv8192/h16/q1'
OUT=$OUT0/ab MLA_NO_SUITE=1 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=100 timeout $((575 - SECONDS)) bash $D/run_patch.sh $D/exp_consecutive_16rows.patch
echo "ab rc=$? $SECONDS s"
