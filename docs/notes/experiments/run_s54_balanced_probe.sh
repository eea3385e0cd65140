#!/usr/bin/env bash
# Fifty-fourth session, one device call (~90 s): where the balanced kernel's time goes. Shapes
# whose gangs take whole elements (bs132 kv4096 H16 q2: one item a CTA, no split; bs264: two
# items, no split) against the uniform plan, and bs128 (two items, one split) also without PDL.
# If bs132 is as slow as bs128 the kernel itself is slower per tile; if not, the items are.
set -u
OUT=${OUT:-/tmp/out}; L=$OUT/probe; mkdir -p "$L"
trap 'tar -czf "$OUT/probe.tgz" -C "$OUT" probe && rm -rf "$L"' EXIT
B=$(mktemp -d /tmp/probe.XXXXXX)
(cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 200 cmake --build "$B" -j14 --target mla_bench) \
  > "$L/build.log" 2>&1 || { echo "BUILD FAILED"; tail -30 "$L/build.log"; exit 1; }
echo "built $SECONDS s"
for tag in bs132/kv4096/h16/q2 bs264/kv4096/h16/q2 bs128/kv4096/h16/q2 bs132/kv4096/h128/q1 \
    ${MLA_PROBE_EXTRA:-}; do
  for side in uniform balanced balanced_nopdl; do
    f=$L/${tag//\//_}_$side
    env $( [ $side != uniform ] && echo MLA_DECODE_SCHEDULE=balanced ) \
      $( [ $side = balanced_nopdl ] && echo MLA_DECODE_PDL=0 ) \
      timeout 60 "$B/bench/mla_bench" --mla_no_check --mla_formats=fp8_e4m3fn --mla_iters=30 \
      "--mla_shapes=$tag" "--mla_csv=$f.csv" > "$f.log" 2>&1
    us=$(python3 -c "import csv,sys; r=next(csv.DictReader(open(sys.argv[1])))
print(r['median_us'], r['floor_read_us'], r['rows_per_cta'], r['route'], r['splits'])" \
      "$f.csv" 2>/dev/null)
    echo "$tag $side $us"
  done
done
echo "total $SECONDS s"
