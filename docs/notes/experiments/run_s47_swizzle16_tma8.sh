#!/usr/bin/env bash
# Prepared in the forty-sixth session, not run (~380 s). The 16-row seesaw in swizzled stages
# (exp_s39_swizzle16.patch) lost 1.01-1.07x at 4 tiles a CTA on contiguous caches (H200 s43,
# H100 s46), where its tiles came by TMA, but gained 0.975-0.978x on 16-token pages at the same
# 4 tiles (its tiles copied by the producer into the same swizzled stages), and 0.95-0.97x from
# 8 tiles with TMA. The tensor-map prefetch did not change the 4-tile loss (s46).
#   B exp_s46_swizzle16_tma8.patch: swizzle16, TMA only where the seesaw's CTAs take 8 tiles or
#     more (splitkv::wgmma_tiles_by_tma; shorter CTAs copy their tiles into the swizzled stages).
#   C exp_s39_swizzle16.patch (TMA wherever the cache allows it).
#   Prediction: B / A 0.97-1.00 at 2-4 tiles a CTA (as the 16-token pages), = C / A (0.95-0.97)
#   from 8 tiles; geomean of the 14 shapes ~0.985 (C 0.994). If B holds it, land B (README's
#   TMA paragraph, notes) and run the checked competition bench on it.
# Smoke (16-row paths, long CTAs, 64 rows) and the suite on B.
set -u
E=docs/notes/experiments
bash $E/run_swizzle16_ab.sh $E/exp_s46_swizzle16_tma8.patch $E/exp_s39_swizzle16.patch
