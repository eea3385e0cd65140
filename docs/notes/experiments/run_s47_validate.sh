#!/usr/bin/env bash
# Forty-seventh session, call 2 (~560 s, carry build-peers): run_validate.sh on 0.7.29 (the
# 16-row seesaw in swizzled stages, TMA from 8 tiles a CTA), then memcheck + synccheck over the
# 16-row suites, a checked mla_bench of MXFP4 and bf16 on the competition shapes, and a split
# sweep (2..64) of the short 16-row shapes (do swizzled stages prefer fewer splits?).
MLA_MORE_FORMATS=mxfp4,bf16 \
  MLA_MORE_SWEEP='fp8_e4m3fn/bs(4|32)/kv(1024|4096|8192)/h16/q1/|fp8_e4m3fn/bs16/kv2048/h16/q1/' \
  exec bash docs/notes/experiments/run_validate_more.sh
