#!/usr/bin/env bash
# Fifty-first session, one device call (carry ["build-peers"]): run_s51_offgrid.sh (the "any
# other shape" row beside FlashMLA), then, with the time left, run_s51_reduce_probe.sh.
E=docs/notes/experiments
MLA_OFFGRID_END=415 timeout 425 bash $E/run_s51_offgrid.sh
echo "offgrid done $SECONDS s"
[ $SECONDS -lt 330 ] && timeout $((500 - SECONDS)) bash $E/run_s51_reduce_probe.sh
echo "total $SECONDS s"
