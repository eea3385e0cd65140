#!/usr/bin/env bash
# Forty-eighth session, call 1 (~410 s, carry build-peers): run_validate.sh on 0.7.30 (e4m3fn's
# 32-row kernel in swizzled stages; its first run as one build), then memcheck + synccheck over
# the 16/32-row suites and long CTAs, and a checked mla_bench of e4m3fnuz, MXFP4 and bf16 on
# the competition shapes. (As run, it also asked for a split sweep of the H16 q_len 2 shapes,
# which named no benchmark: split_sweep.sh runs without --mla_extra.)
exec bash docs/notes/experiments/run_validate_more.sh
