#!/usr/bin/env bash
# Twenty-fifth session, fourth device call: two changes to the solo consumers (B: P^T's barrier
# after the first V fragments, exp_solo_pt_ready.patch; C: B with one score chain at 32 rows,
# exp_solo_pt_ready_one_chain.patch) against the tree (7d6a9d0); the suite on B.
set -u
S='bs128/kv4096/h16/q2,bs64/kv4096/h32/q1,bs32/kv8192/h32/q1,bs256/kv1024/h16/q2,bs8/kv16384/h16/q2,bs256/kv8192/h16/q1,bs64/kv4096/h128/q1'
MLA_AB_FORMATS=fp8_e4m3fn,bf16 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" \
  MLA_AB_TIMEOUT=170 timeout 430 bash docs/notes/experiments/run_patch.sh \
  docs/notes/experiments/exp_solo_pt_ready.patch docs/notes/experiments/exp_solo_pt_ready_one_chain.patch
