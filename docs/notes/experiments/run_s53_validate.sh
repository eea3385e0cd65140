#!/usr/bin/env bash
# Fifty-third session, one device call (~160 s on an H100, carry ["build-peers"]): 0.7.33 (the
# fp8 32-row cost re-fit) on the GPU: run_validate.sh without its checked mla_bench, with the
# off-grid comparison. The whole GPU suite (every forced-variant registration, whose plans the
# re-fit moves), then bench/compare_peers.py beside FlashMLA 9edee0c on the fifty-second
# session's 20 off-grid shapes and on the default grid (fp8 e4m3fn cache, bf16 Q, every output
# checked against an fp32 reference). Logs: $OUT/validate.tgz (off-grid: offgrid.csv; grid:
# compare_peers.csv, named grid.csv in the session's run).
MLA_FORMATS= MLA_VALIDATE_OFFGRID=1 exec bash docs/notes/experiments/run_validate.sh
