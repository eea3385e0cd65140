#!/usr/bin/env bash
# Prepared in the twenty-fifth session, not run (both patches compile without spills; a cold
# review of B found no bug; its producer takes 32 registers, at 24 it spilled 36 / 72 bytes):
#   B = exp_three_solo_16.patch: three solo consumers (512 threads, 160 registers each) for fp8
#       caches at 16 rows (bf16 Q; e4m3 scores at 16 rows keep the seesaw), each taking every
#       third tile, consumers 0 / 1 storing after the
#       merge; and a "full" barrier per consumer and stage where the consumers do not divide the
#       stage count (5 stages here; FP8_MMA at 32 rows then runs solo too);
#   C = exp_solo_full_sets.patch: only the per-consumer full barriers (FP8_MMA at 32 rows solo).
# The protocol (tile t completes on full[t % S][t % C], its consumer waits with parity
# (t / (S * C)) & 1): solo_ring_protocol_model.py, arrivals in and out of issue order, 2 and 3
# consumers, 2-6 stages, no deadlock and no early pass.
# Smoke on B first (a new kernel's first run; the review asks for 1, 2, 3, 4 and 16 tiles at 16
# rows and NaN / all-masked rows: GpuPathsFormat's tile-boundary and GpuFormatHeads' masked
# cases), the A/B of the 14 default cases on fp8 and FP8_MMA, then B's suite. ~420 s.
set -u
D=docs/notes/experiments
MLA_SMOKE='AllFormats/GpuFormatHeads.*:Fp8Q/GpuFp8Query.*:GpuFp8Mma.*:AllFormats/GpuPathsFormat.*' \
  MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_TIMEOUT=220 \
  timeout 570 bash $D/run_patch.sh $D/exp_three_solo_16.patch $D/exp_solo_full_sets.patch
