#!/usr/bin/env bash
# Prepared in the twenty-fifth session, not run (both patches compile; ptxas: B spills 36 / 72
# bytes in the 16-row e4m3fn kernel at 160 registers, C none):
#   B = exp_three_solo_16.patch: three solo consumers (512 threads, 160 registers each) for fp8
#       caches at 16 rows, each taking every third tile, consumers 0 / 1 storing after the
#       merge; and a "full" barrier per consumer and stage where the consumers do not divide the
#       stage count (5 stages here; FP8_MMA at 32 rows then runs solo too);
#   C = exp_solo_full_sets.patch: only the per-consumer full barriers (FP8_MMA at 32 rows solo).
# The protocol (tile t completes on full[t % S][t % C], its consumer waits with parity
# (t / (S * C)) & 1): solo_ring_protocol_model.py, arrivals in and out of issue order, 2 and 3
# consumers, 2-6 stages, no deadlock and no early pass.
# Smoke on B first (a new kernel's first run), the A/B of the 14 default cases on fp8 and
# FP8_MMA, then B's suite. ~420 s on the H200.
set -u
D=docs/notes/experiments
MLA_SMOKE='AllFormats/GpuFormatHeads.*:Fp8Q/GpuFp8Query.*:GpuFp8Mma.*:AllFormats/GpuPathsFormat.*' \
  MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma MLA_AB_TIMEOUT=220 \
  timeout 570 bash $D/run_patch.sh $D/exp_three_solo_16.patch $D/exp_solo_full_sets.patch
