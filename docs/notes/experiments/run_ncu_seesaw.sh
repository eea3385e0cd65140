#!/usr/bin/env bash
# Prepared in the twenty-eighth session, not run: why a faster producer loop makes short CTAs
# slower (the 16-row seesaw at 4-8 tiles a CTA: bs4 kv8192 18.9 -> 21.3 us with the
# consecutive-slot loop, twenty-seventh session). Nsight Compute of the tree and of
# exp_consecutive_16rows.patch (that loop in the 16-row seesaw kernels, no spills) on bs4
# kv8192 and bs32 kv1024; compare with bench/ncu_sass_summary.py: the consumers' waits on full
# stages, the producer's issue, DRAM throughput over the kernel. ~100 s.
set -u
D=docs/notes/experiments
OUT=${OUT:-/tmp/out}
export MLA_NCU_CASES='bs4/kv8192/h16/q1 bs32/kv1024/h16/q1'
OUT=$OUT/a timeout 200 bash $D/ncu_patch.sh; echo "a rc=$? $SECONDS s"
OUT=$OUT/b timeout 200 bash $D/ncu_patch.sh $D/exp_consecutive_16rows.patch; echo "b rc=$? $SECONDS s"
