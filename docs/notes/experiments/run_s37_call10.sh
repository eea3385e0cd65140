#!/usr/bin/env bash
# Thirty-seventh session, call 10 (the session's last ~150 s of device time): a first, trimmed
# run of exp_s38_tma_ss64.patch: smoke of the 64-row producer cases (forced wgmma), then a
# two-shape FP8_MMA A/B; no suite (run_s38_tma.sh is the full call).
set -u
export MLA_TMA_LOG=1
S=bs64/kv4096/h128/q1,bs128/kv4096/h16/q4
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.ConsecutiveSlotsAndPages:GpuRows64.EmptyElementsFp8Mma' \
  MLA_SMOKE_TIMEOUT=60 MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=70 MLA_NO_SUITE=1 \
  bash $E/run_patch.sh $E/exp_s38_tma_ss64.patch
