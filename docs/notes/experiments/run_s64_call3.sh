#!/usr/bin/env bash
# Sixty-fourth session, call 3 (~4 min, no carry): mma16's tile copies from one row address a
# thread (copy_row_pieces, in the tree since 0.7.38; A = the tree with
# exp_s64_mma16_copy_pieces.patch reversed, i.e. 0.7.37's mma16.h). Call 3 ran it before it was
# gated: every format's key rows took the pieces (`if constexpr (Cfg::kKMxfp4)` was `true`).
# Both sides with MLA_DECODE_STAGE1=mma16, two rounds, least of each (ab_min.py: B / A): the
# eight competition shapes and bs64 kv4096 H128 q1 x fp8 e4m3fn, bf16, MXFP4, and the two
# formats the H200's plans give mma16 anyway (fp8 latent with a bf16 rope, MXFP4 K with fp8 V).
# Then B's GPU tests: every mma16-forced registration and the batch-invariant and input-form
# suites (MLA_SUITE=all: the whole suite) with the time left. Logs in $OUT/s64_call3.tgz.
# MLA_AB_FORMATS: other formats for the A/B.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s64_call3
mkdir -p "$L/a" "$L/ab"
build_bench "$L/a" docs/notes/experiments/exp_s64_mma16_copy_pieces.patch -R > "$L/a/dir" &
build_release "$L" "$B" || exit 1
wait
A=$(cat "$L/a/dir"); [ -x "$A/bench/mla_bench" ] || { echo "A BUILD FAILED"; tail -5 "$L/a/build.log"; exit 1; }
echo "builds done $SECONDS s"
shapes=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1
shapes+=,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv1024/h16/q1,bs256/kv8192/h16/q1
shapes+=,bs64/kv4096/h128/q1
export MLA_DECODE_STAGE1=mma16
ab_bench "$L/ab" "$A/bench/mla_bench" "$B/bench/mla_bench" "$shapes" \
  "${MLA_AB_FORMATS:-fp8_e4m3fn,bf16,mxfp4,fp8_e4m3fn_bf16_rope,mxfp4k_fp8v_e4m3fn}"
unset MLA_DECODE_STAGE1
echo "A/B done $SECONDS s"
python3 docs/notes/experiments/ab_min.py "$L/ab"
python3 docs/notes/experiments/ab_min.py "$L/ab" --geomean
left=$((540 - SECONDS))
filter='stage1_mma16|Invariant|EveryFormatAndForm'
[ "${MLA_SUITE:-}" = all ] && filter=''
timeout $left python3 tests/ctest_grouped.py --build "$B" -j 12 ${filter:+-R "$filter"} \
  -E install_ --log-dir "$L/suite" > "$L/suite.log" 2>&1
echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -6
