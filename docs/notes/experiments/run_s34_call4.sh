#!/usr/bin/env bash
# Thirty-fourth session, call 4 (~300 s). Call 3 (exp_row_quads_64.patch, 4 threads a row, each
# instruction 8 rows' 64 bytes): bf16 scores 0.955-0.963 on 1-8-token pages at 64 rows (159.5 ->
# 152.8 us), e4m3 scores 1.03-1.09 slower (125.6 -> 133.6). The guess: a row's 576 bytes in 9
# requests of 64 bytes hurt where the consumers are faster (e4m3 scores). B =
# exp_own_pages_64_l8.patch: 8 threads a row (4 rows' 128 bytes an instruction, 4 rows a thread);
# C = exp_own_pages_64_l4.patch (call 3's form rewritten: the pages of a thread's rows kept as
# int32, its slots formed per row; 16 threads a row spilled 120 bytes at the producer's 24
# registers, not run). Predicted: B 0.95 with bf16 scores and <= 1.00 with e4m3 scores; C as call
# 3. Smoke: GpuRows64 on B, forced to wgmma; no suite (the kept form's runs in the next call).
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page1,bs64/kv4096/h128/q1/page2
S=$S,bs64/kv4096/h128/q1/page4,bs64/kv4096/h128/q1/page8,bs64/kv4096/h128/q1/page16
S=$S,bs128/kv4096/h16/q4/page1,bs128/kv4096/h16/q4/page4,bs32/kv8192/h128/q1/page1
MLA_SMOKE='GpuRows64.*' MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma \
  MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=300 \
  MLA_NO_SUITE=1 bash docs/notes/experiments/run_patch.sh \
  docs/notes/experiments/exp_own_pages_64_l8.patch docs/notes/experiments/exp_own_pages_64_l4.patch
