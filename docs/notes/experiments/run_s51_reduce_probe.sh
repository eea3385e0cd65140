#!/usr/bin/env bash
# Fifty-first session, one device call (~150 s): what the reduce's body costs a split shape in
# the timed run (PDL: its launch and grid wait overlap stage 1's tail). A = the tree, B =
# probe_s51_reduce_body.patch (both reduce kernels return right after their grid wait: no
# partial read, no O written; wrong by design, so --mla_no_check and no suite). B / A on the
# split shapes is the reduce body's share; single-split shapes (bs256) are the control (1.00).
MLA_NO_SUITE=1 MLA_AB_ARGS=--mla_no_check MLA_AB_FORMATS=fp8_e4m3fn,bf16 \
  MLA_AB_TIMEOUT=150 MLA_AB_FILTER='bs(4|32|64|256)/kv(1024|8192)/h16/q1/|bs1/kv65536/h16/q1/' \
  exec bash docs/notes/experiments/run_patch.sh docs/notes/experiments/probe_s51_reduce_body.patch
