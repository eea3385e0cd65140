#!/usr/bin/env bash
# Forty-sixth session, one device call (~500 s): notes "0-s45" calls (1) and (2) together.
# (1) ncu pair of the FP8_MMA 64-row kernel, H128 q1 (bs64 kv4096), the tree and
#     exp_s43_rows_as_m.patch: what sets the round once the step is gone. Tarballs in
#     $OUT/ncu_tree/ and $OUT/ncu_rows_as_m/.
# (2) run_s44_swizzle16_prefetch.sh (its own header says what it predicts).
set -u
OUT=${OUT:-/tmp/out}; E=docs/notes/experiments
for v in tree rows_as_m; do
  p=""; [ "$v" = rows_as_m ] && p=$E/exp_s43_rows_as_m.patch
  mkdir -p "$OUT/ncu_$v"
  OUT=$OUT/ncu_$v MLA_NCU_FORMAT=fp8_e4m3fn_qfp8_mma timeout 150 bash $E/ncu_patch.sh $p \
    > "$OUT/ncu_$v/log.txt" 2>&1
  echo "ncu $v rc=$? $SECONDS s"; grep -E '^==|Duration|Elapsed|Ipc|Busy' "$OUT/ncu_$v/log.txt"
done
timeout $((560 - SECONDS)) bash $E/run_s44_swizzle16_prefetch.sh
echo "total $SECONDS s"
