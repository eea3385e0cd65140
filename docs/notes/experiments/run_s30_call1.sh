#!/usr/bin/env bash
# Prepared in the twenty-ninth session, not run (its device time was spent). Two questions, one
# call (~400 s):
# (a) The 16-row seesaw times 1.01-1.13x slower with the consecutive-slot loop
#     (exp_consecutive_16rows.patch) in mla_bench, but runs faster under ncu (bs4 kv8192 17.60
#     -> 16.93 us: ncu locks clocks to base, flushes caches, serializes launches). A/B of that
#     patch with the reduce's PDL on (default) and off (MLA_DECODE_PDL=0), then the ncu pair at
#     unlocked clocks. If the slowdown goes with PDL off, the dependent launch is the cause
#     (the reduce's CTAs resident beside stage 1's); if it stays with PDL off and ncu at free
#     clocks shows it, the clocks.
# (b) ncu of the fp8 64-row kernel on 16-token pages (H128 q1 bs64 kv4096), the tree against
#     exp_paged_ahead_64.patch (the look-ahead at 64 rows too: 1.011-1.017x there): what the
#     producer waits on per tile, and why the look-ahead costs it.
set -u
D=docs/notes/experiments
OUT=${OUT:-/tmp/out}
S='bs4/kv8192/h16/q1,bs4/kv1024/h16/q1,bs32/kv1024/h16/q1,bs64/kv1024/h16/q1,bs32/kv8192/h16/q1'
for pdl in on off; do
  if [ $pdl = off ]; then export MLA_DECODE_PDL=0; fi
  OUT=$OUT/pdl_$pdl MLA_NO_SUITE=1 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
    MLA_AB_TIMEOUT=110 timeout 170 bash $D/run_patch.sh $D/exp_consecutive_16rows.patch
  echo "pdl $pdl rc=$? $SECONDS s"
done
unset MLA_DECODE_PDL
export MLA_NCU_OPTS='--clock-control none' MLA_NCU_CASES='bs4/kv8192/h16/q1'
OUT=$OUT/ncu_free_a timeout 80 bash $D/ncu_patch.sh; echo "ncu free a rc=$? $SECONDS s"
OUT=$OUT/ncu_free_b timeout 80 bash $D/ncu_patch.sh $D/exp_consecutive_16rows.patch
echo "ncu free b rc=$? $SECONDS s"
unset MLA_NCU_OPTS
export MLA_NCU_CASES='bs64/kv4096/h128/q1/page16 bs64/kv4096/h128/q1'
OUT=$OUT/ncu64_a timeout 100 bash $D/ncu_patch.sh; echo "ncu64 a rc=$? $SECONDS s"
OUT=$OUT/ncu64_b timeout 100 bash $D/ncu_patch.sh $D/exp_paged_ahead_64.patch
echo "ncu64 b rc=$? $SECONDS s"
