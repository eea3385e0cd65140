#!/usr/bin/env bash
# Twenty-eighth session, third device call: the kept change (s28_kept.patch: the consecutive-slot
# producer at MXFP4's 32 rows, and in long CTAs on a paged cache or from 112 tiles) A/B against
# the tree without it (reversed here: the device's tree is a copy), fp8 e4m3fn and MXFP4; then
# a checked mla_bench of B (every element against the host reference) on both formats, and B's
# GPU suite with the time left. ~560 s.
set -u
D=docs/notes/experiments
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
patch -R -p1 --batch < $D/s28_kept.patch > /dev/null || { echo "REVERSE FAILED"; exit 1; }
S='bs256/kv2560/h16/q1/page64,bs256/kv4096/h16/q1/page64,bs256/kv6144/h16/q1/page64,bs256/kv8192/h16/q1/page64,bs256/kv7168/h16/q1,bs256/kv8192/h16/q1,bs256/kv6144/h16/q1,bs128/kv4096/h16/q2,bs64/kv4096/h128/q1,bs128/kv4096/h16/q2/page64,bs32/kv8192/h128/q1,bs32/kv8192/h16/q1'
MLA_NO_SUITE=1 MLA_AB_FORMATS=fp8_e4m3fn,mxfp4 MLA_AB_FILTER='.' \
  MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=270 \
  timeout 330 bash $D/run_patch.sh $D/s28_kept.patch
B=$(ls -dt /tmp/run_patch_builds.*/1 | head -1)
F='bs(4|32|64|256)/kv(1024|8192)/h16/q1/it|bs128/kv4096/h16/q[24]/|kv4096/h128/q[12]/|bs32/kv8192/h128/q1/|bs1/kv65536/h16/q1/'
timeout 120 "$B/bench/mla_bench" --mla_formats=fp8_e4m3fn,mxfp4 --mla_extra --mla_iters=20 \
  "--benchmark_filter=$F" "--mla_csv=$OUT/mla_bench_checked.csv" > "$OUT/mla_bench_checked.log" 2>&1
echo "checked mla_bench rc=$? $SECONDS s"; grep -c "ok: yes" "$OUT/mla_bench_checked.log"
grep -E "ok: no|FAIL" "$OUT/mla_bench_checked.log" | head
left=$((585 - SECONDS))
timeout $left python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ \
  --log-dir /tmp/s28_suite > "$OUT/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$OUT/suite.log" | tail -5
tar -czf "$OUT/suite.tgz" -C /tmp s28_suite
