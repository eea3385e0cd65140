#!/usr/bin/env bash
# 0.2.0 beside the tree on the 20 off-grid shapes, fp8 e4m3fn cache, bf16 Q (~3 min; carry
# ["out/v020"], out/v020/src.tar.gz = `git archive --format=tar.gz 72fa160`, 0.2.0's source).
# The tree's mla_bench is relinked against 0.2.0's static library (the C ABI's functions the
# bench calls are unchanged since 0.2.0; fields added since come from the reserved block, zero
# in the default forms), so both sides are timed by one harness. Two rounds, least of each
# (ab_min.py: B / A = tree / 0.2.0). s61 ran it on an H100 (run_s61_call1.sh part 2); this
# form exists for the H200. Logs in $OUT/v020_offgrid.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call v020_offgrid
grep -q H200 "$L/gpu.txt" || [ "${MLA_ANY_GPU:-0}" = 1 ] ||
  { echo "not an H200 (MLA_ANY_GPU=1 runs it anyway); nothing run"; exit 0; }
mkdir -p /tmp/v020src && tar -xzf out/v020/src.tar.gz -C /tmp/v020src || exit 1
(cmake -S /tmp/v020src -B /tmp/v020b -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda -DMLA_BUILD_TESTS=OFF -DMLA_BUILD_BENCH=OFF \
  && timeout 200 cmake --build /tmp/v020b -j4 --target mla_decode_static) > "$L/v020_build.log" 2>&1 &
vpid=$!
build_release "$L" "$B" mla_bench || exit 1
wait $vpid || { echo "0.2.0 BUILD FAILED"; tail -20 "$L/v020_build.log"; exit 1; }
echo "builds done $SECONDS s"
(cd "$B" && ninja -t commands bench/mla_bench | tail -1 > "$L/link_cmd.txt" &&
 sed 's# src/libmla_decode.a # /tmp/v020b/src/libmla_decode.a #; s#-o bench/mla_bench #-o bench/mla_bench_v020 #' \
   "$L/link_cmd.txt" > "$L/link_v020.sh" && bash "$L/link_v020.sh") > "$L/link.log" 2>&1 \
  || { echo "LINK FAILED"; tail -20 "$L/link.log"; exit 1; }
OFF=$(tr '\n' ';' < docs/notes/experiments/offgrid_shapes.txt | tr ';' '\n' |
      awk -F, 'NF==4 {printf "%sbs%s/kv%s/h%s/q%s", (n++ ? "," : ""), $1, $3, $4, $2}')
mkdir -p "$L/v020"
for r in 1 2; do
  [ $r = 1 ] || [ $SECONDS -lt ${MLA_ROUND2_BEFORE:-400} ] || { echo "round 2 skipped ($SECONDS s)"; break; }
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
