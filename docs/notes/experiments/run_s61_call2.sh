#!/usr/bin/env bash
# Sixty-first session, call 2 (~3-4 min; carry ["out/v020"] for the 0.2.0 part):
#  (1) Are the 64-row round's sections set by the two consumers sharing the tensor pipe? The
#      wait-share stamps (exp_s61_wait_share.patch) on the kernel as it is and on two probes
#      (timing only, wrong results by design): consumer 1 skips its value section
#      (probe_s61_c1_no_value.patch) / issues no score products (probe_s61_c1_no_scores.patch).
#      Consumer 0's sections beside consumer 1's missing products say how much of each is
#      contention (it shrinks) and how much its own chain (it stays).
#  (2) On an H200 only: 0.2.0 beside the tree on the off-grid shapes, as call 1 did on an H100.
# Logs in $OUT/s61_call2.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
device_call s61_call2
X=docs/notes/experiments
H200=0; grep -q H200 "$L/gpu.txt" && H200=1
if [ $H200 = 1 ]; then
  mkdir -p /tmp/v020src && tar -xzf out/v020/src.tar.gz -C /tmp/v020src
  (cmake -S /tmp/v020src -B /tmp/v020b -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda -DMLA_BUILD_TESTS=OFF -DMLA_BUILD_BENCH=OFF \
    && timeout 200 cmake --build /tmp/v020b -j2 --target mla_decode_static) > "$L/v020_build.log" 2>&1 &
  vpid=$!
fi
declare -A dir
for side in base nov nos; do
  case $side in base) p=$X/exp_s61_wait_share.patch;; nov) p=$X/probe_s61_c1_no_value.patch;;
    nos) p=$X/probe_s61_c1_no_scores.patch;; esac
  mkdir -p "$L/$side"
  (build_bench "$L/$side" "$p" > "/tmp/dir_$side" 2> "$L/$side/err.log") &
done
wait
for side in base nov nos; do dir[$side]=$(cat /tmp/dir_$side); echo "$side: ${dir[$side]:-BUILD FAILED}"; done
echo "builds done $SECONDS s"
for r in 1 2; do
  for side in base nov nos; do
    [ -n "${dir[$side]}" ] || continue
    for c in fp8_e4m3fn:bs64/kv4096/h128/q1 fp8_e4m3fn_qfp8_mma:bs64/kv4096/h128/q1; do
      f=${c%%:*}; s=${c#*:}; n=$L/$side/${f}_$(echo "$s" | tr / _)_r$r
      MLA_TL_AT=10 timeout 60 "${dir[$side]}/bench/mla_bench" --mla_no_check --mla_iters=30 \
        "--mla_formats=$f" "--mla_shapes=$s" "--mla_csv=$n.csv" > "$n.log" 2>&1 || echo "$c rc=$?"
      [ $r = 1 ] || continue
      echo "== $side $f $s: median $(python3 -c "import csv,sys
print(next(csv.DictReader(open(sys.argv[1])))['median_us'])" "$n.csv" 2>/dev/null) us"
      python3 $X/wait_share_parse.py "$n.log" 64
    done
  done
done
echo "probes done $SECONDS s"
if [ $H200 = 1 ] && [ -n "${dir[base]}" ]; then
  wait $vpid 2>/dev/null
  B=$(build_tree mla_bench 200) || exit 1
  (cd "$B" && ninja -t commands bench/mla_bench | tail -1 > "$L/link_cmd.txt" &&
   sed 's# src/libmla_decode.a # /tmp/v020b/src/libmla_decode.a #; s#-o bench/mla_bench #-o bench/mla_bench_v020 #' \
     "$L/link_cmd.txt" > "$L/link_v020.sh" && bash "$L/link_v020.sh") > "$L/link.log" 2>&1 \
    || { echo "LINK FAILED"; tail -20 "$L/link.log"; exit 1; }
  OFF=$(tr '\n' ';' < $X/offgrid_shapes.txt | tr ';' '\n' |
        awk -F, 'NF==4 {printf "%sbs%s/kv%s/h%s/q%s", (n++ ? "," : ""), $1, $3, $4, $2}')
  mkdir -p "$L/v020"
  for side in A B; do
    bin=$B/bench/mla_bench; [ $side = A ] && bin=$B/bench/mla_bench_v020
    timeout 150 "$bin" --mla_no_check --mla_iters=30 --mla_formats=fp8_e4m3fn "--mla_shapes=$OFF" \
      "--mla_csv=$L/v020/${side}1.csv" > "$L/v020/${side}1.log" 2>&1 || echo "$side rc=$?"
  done
  python3 $X/ab_min.py "$L/v020"
fi
echo "total $SECONDS s"
