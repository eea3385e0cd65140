#!/usr/bin/env bash
# Thirty-sixth session, call 2 (~90 s): why e4m3 scores at 64 rows with K from shared memory
# (exp_fp8mma_ss_64.patch) ran 1.49x slower than the tree (call 1): ncu (boost clocks) of
# bs64 kv4096 H128 q1 FP8_MMA, the tree against the patch; compare stall reasons, shared-memory
# wavefronts and the producer's global-load sectors.
set -u
OUT=${OUT:-/tmp/out}
for side in tree ss; do
  mkdir -p "$OUT/$side"
  if [ $side = tree ]; then p=""; else p=docs/notes/experiments/exp_fp8mma_ss_64.patch; fi
  OUT=$OUT/$side MLA_NCU_FORMAT=fp8_e4m3fn_qfp8_mma MLA_NCU_OPTS="--clock-control none" \
    MLA_NCU_CASES="bs64/kv4096/h128/q1" \
    timeout 200 bash docs/notes/experiments/ncu_patch.sh $p
  echo "$side rc=$? $SECONDS s"
done
