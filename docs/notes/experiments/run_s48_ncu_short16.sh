#!/usr/bin/env bash
# Prepared in the forty-seventh session, not run (~120 s): what the 16-row seesaw's swizzled
# stages (0.7.29) cost in short CTAs. A/B on the H100 (s47): 0.996-1.025x the padded stages'
# time at 2-4 tiles a CTA (copies or TMA alike), 0.948-0.969x from 8 tiles. ncu of one 4-tile
# case (bs32 kv1024 H16 q1, 4 splits) and one 2-tile case (bs4 kv1024, 8 splits), fp8 e4m3fn
# with bf16 Q, on the tree (swizzled) and on exp_s47_padded16.patch (the padded seesaw: its
# sm_90a .text is byte-identical to 0.7.28's, checked with ptxas in s47). Compare cycles, the
# prologue (first full-barrier wait) and the producer's and consumers' stall reasons.
set -u
E=docs/notes/experiments; OUT=${OUT:-/tmp/out}
export MLA_NCU_CASES="bs32/kv1024/h16/q1 bs4/kv1024/h16/q1"
for side in swizzled padded; do
  mkdir -p "$OUT/$side"
  if [ $side = swizzled ]; then OUT=$OUT/$side timeout 200 bash $E/ncu_patch.sh
  else OUT=$OUT/$side timeout 200 bash $E/ncu_patch.sh $E/exp_s47_padded16.patch; fi
  echo "== $side done $SECONDS s"
done
