#!/usr/bin/env bash
# Prepared in the forty-third session, not run (~380 s). The 16-row seesaw in swizzled stages
# (exp_s39_swizzle16.patch) ran correct in s43 and 0.944-0.976 where CTAs take 8-32 tiles, but
# 1.046-1.069 at 4 tiles (bs4 kv8192 18.25 -> 19.52 us, bs32 kv1024 18.45 -> 19.30). Suspect:
# the first TMA copy of a CTA also waits for its tensor maps, a memory round trip after the
# flush (nothing prefetched them), which a 4-tile CTA pays in full.
#   B exp_s43_swizzle16_prefetch.patch: swizzle16 + exp_s43_tma_prefetch (thread 0 issues
#     prefetch.tensormap for both maps beside the mbarrier inits, before the Q prologue; ptxas:
#     spills as before, the 16-row kernels none).
#   C exp_s39_swizzle16.patch alone; D exp_s43_tma_prefetch.patch alone (the 64-row kernels
#     and long CTAs).
#   Prediction: B against C 0.95-0.97 at 4 tiles a CTA (~0.7 us of ~19), 0.99-1.00 from 8;
#     D 0.99-1.00 (one round trip a CTA of 64 or 40+ tiles).
#   If B still loses at 4 tiles: the swizzled seesaw only from 8 tiles a CTA (a third 16-row
#   fp8 kernel chosen by tiles_per_split, as wgmma_long_cta chooses; notes "Forty-third
#   session").
# Smoke (16-row paths) and the suite on B.
set -u
E=docs/notes/experiments
bash $E/run_swizzle16_ab.sh $E/exp_s43_swizzle16_prefetch.patch $E/exp_s39_swizzle16.patch \
  $E/exp_s43_tma_prefetch.patch
