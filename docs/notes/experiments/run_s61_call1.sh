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
mkdir -p /tmp/v020src && tar -xzf out/v020/src.tar.gz -C /tmp/v020src
(cmake -S /tmp/v020src -B /tmp/v020b -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda -DMLA_BUILD_TESTS=OFF -DMLA_BUILD_BENCH=OFF \
  && timeout 200 cmake --build /tmp/v020b -j2 --target mla_decode_static) > "$L/v020_build.log" 2>&1 &
vpid=$!
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
(cd "$B" && ninja -t commands bench/mla_bench | tail -1 > "$L/link_cmd.txt" &&
 sed 's# src/libmla_decode.a # /tmp/v020b/src/libmla_decode.a #; s#-o bench/mla_bench #-o bench/mla_bench_v020 #' \
   "$L/link_cmd.txt" > "$L/link_v020.sh" && bash "$L/link_v020.sh") > "$L/link.log" 2>&1 \
  || { echo "LINK FAILED"; tail -20 "$L/link.log"; exit 1; }
OFF=$(tr '\n' ';' < docs/notes/experiments/offgrid_shapes.txt | tr ';' '\n' |
      awk -F, 'NF==4 {printf "%sbs%s/kv%s/h%s/q%s", (n++ ? "," : ""), $1, $3, $4, $2}')
mkdir -p "$L/v020"
for r in 1 2; do
  [ $r = 1 ] || [ $SECONDS -lt 330 ] || { echo "round 2 skipped ($SECONDS s)"; break; }
  for side in A B; do
    bin=$B/bench/mla_bench; [ $side = A ] && bin=$B/bench/mla_bench_v020
    timeout 150 "$bin" --mla_no_check --mla_iters=30 --mla_formats=fp8_e4m3fn "--mla_shapes=$OFF" \
      "--mla_csv=$L/v020/$side$r.csv" > "$L/v020/$side$r.log" 2>&1 || echo "$side$r rc=$?"
    echo "$side$r done $SECONDS s"
  done
done
grep -m1 'libmla_decode 0' "$L/v020/A1.log"; grep -m1 'libmla_decode 0' "$L/v020/B1.log"
python3 docs/notes/experiments/ab_min.py "$L/v020"
echo "total $SECONDS s"
