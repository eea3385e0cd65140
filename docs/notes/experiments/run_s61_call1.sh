#!/usr/bin/env bash
# Sixty-first session, call 1 (~5 min; carry ["out/v020"], out/v020/src.tar.gz = `git archive
# --format=tar.gz 72fa160`, the 0.2.0 release's source):
#  (1) the 64-row seesaw's sections and waits (exp_s61_wait_share.patch, wait_share_parse.py):
#      how much of a round consumer 1 waits for consumer 0's maxima and consumer 0 for
#      consumer 1's P^T (queue 0-s60 (1) asks for it before private references are written);
#  (2) 0.2.0 beside the tree through one harness: the tree's mla_bench relinked against 0.2.0's
#      static library (the C ABI's functions the bench calls are unchanged since 0.2.0, and the
#      fields added since come from the reserved block, zero in the default forms), timed with
#      the tree's on the 20 off-grid shapes (offgrid_shapes.txt), fp8 e4m3fn cache, bf16 Q:
#      the "never slower than 0.2.0" half of the issue's "any other shape" row.
# Logs in $OUT/s61_call1.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s61_call1
v020_build || exit 1
mkdir -p "$L/ws"
build_bench "$L/ws" docs/notes/experiments/exp_s61_wait_share.patch > /tmp/ws_dir 2> "$L/ws/err.log" &
wpid=$!
build_release "$L" "$B" mla_bench || exit 1
wait $vpid || { echo "0.2.0 BUILD FAILED"; tail -20 "$L/v020_build.log"; }
wait $wpid; WS=$(cat /tmp/ws_dir)
echo "builds done $SECONDS s (wait-share build: ${WS:-failed})"

# (1) the waits
if [ -n "$WS" ]; then
  for c in fp8_e4m3fn:bs64/kv4096/h128/q1:64 fp8_e4m3fn_qfp8_mma:bs64/kv4096/h128/q1:64 \
           fp8_e4m3fn:bs128/kv4096/h16/q4:64; do
    f=${c%%:*}; rest=${c#*:}; s=${rest%:*}; tiles=${rest##*:}; n=$L/ws/${f}_$(echo "$s" | tr / _)
    MLA_TL_AT=10 timeout 60 "$WS/bench/mla_bench" --mla_no_check --mla_iters=30 "--mla_formats=$f" \
      "--mla_shapes=$s" "--mla_csv=$n.csv" > "$n.log" 2>&1 || echo "$c rc=$?"
    echo "== $f $s"
    python3 docs/notes/experiments/wait_share_parse.py "$n.log" "$tiles"
  done
fi
echo "waits done $SECONDS s"

# (2) 0.2.0 beside the tree
v020_offgrid "$B" 2 330
echo "total $SECONDS s"
