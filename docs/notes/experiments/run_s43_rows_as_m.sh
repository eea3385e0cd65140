#!/usr/bin/env bash
# Forty-third session, call 1 (290 s; ran: correct, 1.015-1.027 on contiguous FP8_MMA caches,
# not landed; notes "Forty-third session"): e4m3 scores at 64 rows with the rows as wgmma's
# M (exp_s43_rows_as_m.patch; WgmmaConfig::kRowsAsM): S = Q K^T (the score product's two
# descriptors swapped), a row's tile maximum in its quad (two shuffles) instead of lanes g,
# then 4 warps through shared memory and a named barrier; every quad does its rows' softmax
# step (no owners' barrier); P^T by stmatrix without .trans. Only the FP8_MMA 64-row kernel's
# PTX changes (fp8, bf16, MXFP4: same); ptxas as before (168 registers, 8 bytes of spill: the
# producer's).
#   Prediction (s37 timeline, FP8_MMA H128 q1: S done -> tile maxima barrier ~824 cycles and
#   the owners' step ~386 of a 5,964-cycle round): 0.90-0.95 on FP8_MMA H128 q1 / q2 / H16 q4
#   (107 -> ~100 us); 1.00 on the fp8 (bf16 Q) rows (same PTX: the A/B's noise floor).
# Smoke (the FP8_MMA 64-row registrations) first, then the A/B, then B's suite.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs32/kv8192/h128/q1,bs64/kv4096/h128/q1/page1
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma,fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  bash $E/run_patch.sh $E/exp_s43_rows_as_m.patch
