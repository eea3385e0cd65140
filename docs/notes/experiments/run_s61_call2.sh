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
  v020_build || exit 1
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
  v020_offgrid "$B" 1
fi
echo "total $SECONDS s"
