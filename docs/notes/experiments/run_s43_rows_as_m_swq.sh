#!/usr/bin/env bash
# Forty-third session, call 2 (~300 s): call 1 (run_s43_rows_as_m.sh) found the rows as M
# correct (smoke and suite green) but 1.015-1.027 slower on contiguous FP8_MMA caches. With Q
# as the A operand, Q sat in the unswizzled core-matrix layout that cost the K tile 1.36-1.5x
# as A in s36. B = exp_s43_rows_as_m_swq.patch (cumulative): write_q lays Q out as a stage is
# (ss_offset: 128-byte swizzle, rope 64-byte), the score product takes both operands by the
# same swizzled descriptors. C = call 1's patch. A/B of FP8_MMA only (bf16 Q: same PTX), smoke
# and suite on B.
set -u
S=bs64/kv4096/h128/q1,bs64/kv4096/h128/q1/page64,bs64/kv4096/h128/q2,bs128/kv4096/h16/q4
S=$S,bs32/kv8192/h128/q1,bs64/kv4096/h128/q1/page1
E=docs/notes/experiments
MLA_SMOKE='GpuRows64.*:GpuFp8Mma.*' MLA_SMOKE_TIMEOUT=120 \
  MLA_AB_FORMATS=fp8_e4m3fn_qfp8_mma MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=200 \
  bash $E/run_patch.sh $E/exp_s43_rows_as_m_swq.patch $E/exp_s43_rows_as_m.patch
