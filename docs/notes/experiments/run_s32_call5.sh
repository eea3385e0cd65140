#!/usr/bin/env bash
# Thirty-second session, call 5 (~260 s, carry ["build-peers"]): run_validate.sh on 0.7.15's
# final kernels: the whole suite, a checked mla_bench over e4m3fn (bf16 Q, fp8 Q, FP8_MMA) on the
# default shapes plus the paged extra shapes (pages of 1, 16 and 64), FlashMLA beside it.
set -u
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/'
F="$F|bs32/kv8192/h128/q1/|bs1/kv65536/h16/q1/|/page(1|16|64)/"
MLA_BENCH_FILTER=$F timeout 580 bash docs/notes/experiments/run_validate.sh
