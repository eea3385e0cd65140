#!/usr/bin/env bash
# Forty-sixth session, call 1 (~570 s): run_validate.sh (carry build-peers; the first GPU run
# of the PTX layer and the wgmma launch through MLA_LAUNCH), then, on its build while time is
# left, ncu of MXFP4's 16-row staged kernel on bs256 kv8192 H16 q1 (last profiled in the
# twenty-first session, 0.7.5: 3,640 cycles a tile against fp8's 2,696) into $OUT/ncu_mxfp4/.
set -u
OUT=${OUT:-/tmp/out}; E=docs/notes/experiments
timeout 480 bash $E/run_validate.sh
b=$(ls -d /tmp/validate_build.* | head -1)
N=$OUT/ncu_mxfp4; mkdir -p "$N"; c=bs256_kv8192_h16_q1
if [ $SECONDS -lt 520 ] && [ -x "$b/bench/mla_bench" ]; then
  timeout $((565 - SECONDS)) ncu --kernel-name regex:stage1_wgmma --launch-skip 1 \
    --launch-count 1 --set full --import-source no -o "$N/$c" "$b/bench/mla_bench" \
    --mla_formats=mxfp4 --mla_shapes=bs256/kv8192/h16/q1 --mla_iters=2 --mla_no_check \
    > "$N/$c.log" 2>&1
  echo "ncu rc=$? $SECONDS s"
  ncu -i "$N/$c.ncu-rep" --page source --csv --print-source sass > "$N/$c.sass.csv" 2>/dev/null
  ncu -i "$N/$c.ncu-rep" --page details --csv > "$N/$c.details.csv" 2>/dev/null
  python3 bench/ncu_sass_summary.py "$N/$c.sass.csv" --top 40 > "$N/$c.summary" 2>&1
  rm -f "$N/$c.ncu-rep"; head -50 "$N/$c.summary"
  tar -czf "$OUT/ncu_mxfp4.tgz" -C "$OUT" ncu_mxfp4 && rm -rf "$N"
fi
echo "total $SECONDS s"
