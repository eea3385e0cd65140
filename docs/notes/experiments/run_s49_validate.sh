#!/usr/bin/env bash
# Prepared in the forty-eighth session (~560 s, carry build-peers; copy
# ../shared/anchors/peers/{build_flashmla.sh,flashmla-*.tar.xz} into build-peers/ first):
# run_validate.sh on 0.7.31 with FlashMLA beside (its GPU suite runs GpuFp8Mma's new 16-head
# shapes and their .one_split registration for the first time on a GPU), then memcheck +
# synccheck over the suites that reach the e4m3 16/32-row and long-CTA kernels, and a checked
# mla_bench of FP8_MMA (e4m3 scores), MXFP4 and bf16 on the competition and engine shapes.
MLA_MORE_SANITIZE='GpuLongCta.*:GpuRows16And32.*' \
  MLA_MORE_FORMATS=fp8_e4m3fn_qfp8_mma,mxfp4,bf16 \
  MLA_MORE_FILTER='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/' \
  exec bash docs/notes/experiments/run_validate_more.sh
