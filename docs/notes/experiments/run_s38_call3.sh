#!/usr/bin/env bash
# Thirty-eighth session, call 3 (~420 s): side 1 = exp_s38_tma_long_cta.patch, side 2 =
# exp_s38_tma_pages64.patch.
#   pages64: TMA for whole tiles of swizzled stages on pages of a multiple of 64 tokens too
#     (the producer's swizzled loop in a function of its own, wgmma_producer_tiles_ss, tokens
#     in 32 bits; the TMA thread's row is tile_tok0 + its ss_page, a contiguous cache's
#     ss_page its first slot). Predicted: page64 H128 q1 143.7 -> ~135 us (contiguous), other
#     shapes unchanged. It spills 24-28 bytes in the 64-row kernels (ptxas; the same code with
#     the contiguous cache's row instead of ss_page spills none): SASS around every local
#     access of those kernels -> $OUT/spill_sass.txt.
#   long_cta: pages64 plus the 16-row long-CTA kernel (bs256 H16) in swizzled stages (three
#     solo consumers; K loaded from the swizzle as at 64 rows), so its whole tiles come by TMA
#     too. Predicted 0.97-1.00 on bs256 kv8192 (the kernel waits on HBM, two of five stages in
#     flight; TMA removes the producer's issue, not the waits).
# Smoke (GpuRows64, GpuFp8Mma, GpuLongCta) and the suite run on side 1.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q1/page16
S=$S,bs64/kv4096/h128/q2/page64,bs256/kv8192/h16/q1,bs256/kv8192/h16/q1/page64
S=$S,bs256/kv8192/h16/q1/page16
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*:GpuLongCta.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=170 \
  bash $E/run_patch.sh $E/exp_s38_tma_long_cta.patch $E/exp_s38_tma_pages64.patch
OUT=${OUT:-/tmp/out}
o=$(find /tmp/run_patch_builds.*/1 -name 'stage1_wgmma_fp8.*.o' | head -1)
echo "object: $o" > "$OUT/spill_sass.txt"
cuobjdump -sass "$o" | awk '/Function :/ {keep = ($0 ~ /Li64/)} keep {print}' |
  grep -n -B14 -A4 -E 'STL|LDL' | head -500 >> "$OUT/spill_sass.txt"
