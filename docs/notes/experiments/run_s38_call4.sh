#!/usr/bin/env bash
# Thirty-eighth session, call 4: validation of 0.7.21 (swizzled stages and TMA for the 64-row fp8
# kernels and long CTAs, contiguous and 64-token pages): run_validate.sh (suite, checked
# mla_bench over e4m3fn / fp8 Q / FP8_MMA, FlashMLA beside it; carry build-peers), then
# memcheck over the tests of the new paths (forced wgmma) on its build.
set -u
OUT=${OUT:-/tmp/out}
E=docs/notes/experiments
bash $E/run_validate.sh
b=$(ls -d /tmp/validate_build.* | head -1)
MLA_SANITIZE_TIMEOUT=110 bash $E/run_sanitize.sh "$b" \
  'GpuRows64.ConsecutiveSlotsAndPages:GpuLongCta.*' memcheck
