#!/usr/bin/env bash
# Twenty-fourth session's second device call (on the GPU machine, repository root): the first
# re-fitted cost table (exp_cost_refit_s24.patch: 32 / 64-row fixed costs 5 / 16 us on every
# CTA; measured, then replaced by split_cta_us, which charges split CTAs only) against the tree,
# on a sample of the shapes it moves (cost_refit_s24_*_shapes.txt), fp8 through run_patch.sh,
# MXFP4 through bench/ab.py on the same builds. Logs: docs/perf/h200_2026-12-03_s24/.
set -u
E=docs/notes/experiments
export MLA_AB_FORMATS=fp8_e4m3fn MLA_AB_FILTER='.' MLA_AB_TIMEOUT=230 MLA_NO_SUITE=1
export MLA_AB_ARGS="--mla_no_check --mla_shapes=$(cat $E/cost_refit_s24_fp8_shapes.txt)"
timeout 300 bash $E/run_patch.sh $E/exp_cost_refit_s24.patch 2>&1 | tail -32
B=$(ls -dt /tmp/run_patch_builds.* | head -1)
timeout 250 python3 bench/ab.py --rounds 2 --csv $OUT/ab_mx.csv $B/a/bench/mla_bench $B/1/bench/mla_bench -- \
  --mla_formats=mxfp4 --mla_extra --mla_iters=20 --benchmark_filter=. --mla_no_check \
  "--mla_shapes=$(cat $E/cost_refit_s24_mxfp4_shapes.txt)" > $OUT/ab_mx.log 2>&1
echo "ab mx rc=$?"; tail -28 $OUT/ab_mx.log
